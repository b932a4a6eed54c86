/* h_embeddings: the embeddings' state (GET /api/embeddings) and the
 * backfill job (POST /api/embeddings/backfill), over HTTP (service/embed.c). */
#include "api/handlers.h"
#include "service/embed.h"
#include "service/jobops.h"

void h_embeddings_status(struct request *req, struct response *res)
{
    http_call(req, res, svc_embed_status);
}

void h_embeddings_backfill(struct request *req, struct response *res)
{
    http_call_body(req, res, svc_embed_backfill);
}
