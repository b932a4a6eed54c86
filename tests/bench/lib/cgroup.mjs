// cgroup.mjs: emulated machines for the benchmarks, with the cgroup v1 `cpu`
// controller (no systemd: the cgroup files are written directly; root only).
// A Machine is a cgroup /sys/fs/cgroup/cpu/knowhub-bench-PID/NAME with a CPU
// quota (cpu.cfs_quota_us over a 20 ms cpu.cfs_period_us: 0.3 CPU is 6 ms
// of every 20 ms, whichever cores run it); the processes moved into it, and
// the children they fork afterwards, share that quota. Every machine made is
// undone by restoreAll(): each process moved back to the cgroup it came from,
// then the cgroup removed (rmdir fails while a process is in it). The
// benchmark calls restoreAll in its finally, on SIGINT/SIGTERM and at exit;
// a detached watchdog does the same if the process is killed outright.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const CPU = '/sys/fs/cgroup/cpu';
// A short period: a quota of a few ms is spent and refilled often, so a
// throttled machine stalls 20 ms at most rather than most of 100 ms.
const PERIOD_US = 20000;
const base = path.join(CPU, `knowhub-bench-${process.pid}`);
const machines = [];
let watchdogStarted = false;

/** Why machines cannot be made here ('' when they can). */
export function unavailable() {
    if (process.getuid?.() !== 0) return 'emulated machines need root (they write /sys/fs/cgroup/cpu)';
    if (!fs.existsSync(path.join(CPU, 'cpu.cfs_quota_us'))) return `no cgroup v1 cpu controller at ${CPU}`;
    return '';
}

/** The cgroup (relative to the cpu hierarchy's root) a process is in, or '/'. */
function cgroupOf(pid) {
    try {
        for (const l of fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n')) {
            const [, ctl, p] = l.split(':');
            if (ctl && ctl.split(',').includes('cpu')) return p || '/';
        }
    } catch {
        /* gone */
    }
    return '/';
}

/** The PIDs (thread group ids) in a cgroup directory. */
function procs(dir) {
    try {
        return fs.readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
    } catch {
        return [];
    }
}

/** A process's CPU time so far (utime + stime of /proc/PID/stat), seconds; 0 when gone. */
export function cpuSeconds(pid) {
    try {
        const st = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
        return (Number(f[11]) + Number(f[12])) / 100; // USER_HZ is 100 on Linux
    } catch {
        return 0;
    }
}

/** The PIDs whose parent is pid (from /proc). */
export function childrenOf(pid) {
    const out = [];
    for (const d of fs.readdirSync('/proc')) {
        if (!/^\d+$/.test(d)) continue;
        try {
            const st = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
            if (Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(d));
        } catch {
            /* gone meanwhile */
        }
    }
    return out;
}

// A detached shell that, once this process is gone, moves every process of
// every machine back to the root cgroup and removes the cgroups.
function startWatchdog() {
    if (watchdogStarted) return;
    watchdogStarted = true;
    const script = 'pid=$0 base=$1; while kill -0 "$pid" 2>/dev/null; do sleep 1; done; ' +
        'for d in "$base"/*/; do [ -d "$d" ] || continue; while read -r p; do echo "$p" > /sys/fs/cgroup/cpu/cgroup.procs; done < "$d/cgroup.procs"; rmdir "$d"; done; rmdir "$base"';
    spawn('bash', ['-c', script, String(process.pid), base], { detached: true, stdio: 'ignore' }).unref();
}

export class Machine {
    /** A cgroup NAME with cpus CPUs of quota (0: no quota). */
    constructor(name, cpus) {
        const why = unavailable();
        if (why) throw new Error(why);
        startWatchdog();
        fs.mkdirSync(base, { recursive: true });
        this.name = name;
        this.dir = path.join(base, name);
        fs.mkdirSync(this.dir);
        this.origin = new Map(); // pid -> cgroup it came from
        machines.push(this);
        this.setCpus(cpus);
    }

    /** Change the quota (cpus CPUs; 0: unlimited). */
    setCpus(cpus) {
        this.cpus = cpus;
        fs.writeFileSync(path.join(this.dir, 'cpu.cfs_period_us'), String(PERIOD_US));
        fs.writeFileSync(path.join(this.dir, 'cpu.cfs_quota_us'), cpus > 0 ? String(Math.round(cpus * PERIOD_US)) : '-1');
    }

    /** Move processes in (all their threads); a child forked later stays in. */
    add(...pids) {
        for (const pid of pids) {
            if (!pid || procs(this.dir).includes(pid)) continue;
            const from = cgroupOf(pid);
            try {
                fs.writeFileSync(path.join(this.dir, 'cgroup.procs'), String(pid));
                if (!this.origin.has(pid)) this.origin.set(pid, from);
            } catch (e) {
                if (e.code !== 'ESRCH') throw e; // exited meanwhile
            }
        }
    }

    /** Move a process and every descendant that runs now. */
    addTree(pid) {
        this.add(pid);
        for (const c of childrenOf(pid)) this.addTree(c);
    }

    pids() {
        return procs(this.dir);
    }

    /** CPU seconds of the processes in it now (see cpuSeconds). */
    cpuSeconds() {
        return this.pids().reduce((a, p) => a + cpuSeconds(p), 0);
    }

    /** cpu.stat: {nr_periods, nr_throttled, throttled_time (ns)}. */
    stat() {
        const o = {};
        try {
            for (const l of fs.readFileSync(path.join(this.dir, 'cpu.stat'), 'utf8').split('\n')) {
                const [k, v] = l.split(' ');
                if (k) o[k] = Number(v);
            }
        } catch {
            /* removed */
        }
        return o;
    }

    /** Every process back where it came from (the root for one forked inside), then rmdir. */
    restore() {
        for (let attempt = 0; attempt < 5; attempt++) {
            const left = this.pids();
            if (!left.length) break;
            for (const pid of left) {
                const to = path.join(CPU, this.origin.get(pid) || '/', 'cgroup.procs');
                try {
                    fs.writeFileSync(fs.existsSync(to) ? to : path.join(CPU, 'cgroup.procs'), String(pid));
                } catch {
                    /* exited meanwhile */
                }
            }
        }
        try {
            fs.rmdirSync(this.dir);
        } catch (e) {
            if (e.code !== 'ENOENT') console.error(`cgroup.mjs: could not remove ${this.dir}: ${e.message}`);
        }
    }
}

/** Undo every machine (idempotent); removes the benchmark's cgroup directory. */
export function restoreAll() {
    while (machines.length) machines.pop().restore();
    try {
        fs.rmdirSync(base);
    } catch {
        /* never made, or already gone */
    }
}

process.on('exit', restoreAll);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(sig, () => {
        restoreAll();
        process.exit(130);
    });
}
