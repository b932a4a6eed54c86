/* Placeholder page: shows whether the API answers. */
fetch('/api/health')
  .then((r) => r.json())
  .then((j) => {
    document.getElementById('status').textContent =
      j.status === 'success' ? `Server is up (version ${j.data.version}).` : 'Server error.';
  })
  .catch(() => {
    document.getElementById('status').textContent = 'Server is not answering.';
  });
