#!/usr/bin/env bash
# tests/pg/sql_check.sh: checks fcgi/store/pg_sql.c against a real, throwaway
# PostgreSQL cluster: the schema loads (as one text, as PQexec runs it); every
# statement PREPAREs (syntax, tables, every parameter's type inferable), with
# the parameter types the C code's binding letters need and no boolean or
# numeric result column; every check answers 0 on the empty schema and after
# a scenario that exercises the statements and triggers; S_JOB_CLAIM from 4
# concurrent sessions claims no job twice; the statements taking a list of
# terms probe its index. A line per check; exits non-zero
# on any failure. Needs PostgreSQL's server binaries (PGBIN, default
# /usr/lib/postgresql/15/bin) and a C compiler; as root the cluster runs as
# user postgres.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
CC=${CC:-cc}
WORK=$(mktemp -d /tmp/kh-pgsql.XXXXXX)
DATA=$WORK/data
SOCK=$WORK/sock
OUT=$WORK/sql
DB=knowhub_check
fails=0

ok() { echo "ok   $*"; }
bad() {
    echo "FAIL $*"
    fails=$((fails + 1))
}
as_pg() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
cleanup() {
    if [ -f "$DATA/postmaster.pid" ]; then
        as_pg "$PGBIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null 2>&1 ||
            kill -QUIT "$(head -1 "$DATA/postmaster.pid")" 2>/dev/null
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

psql_() { "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$SOCK" -U knowhub "$@"; }
q() { psql_ -d "$DB" "$@"; }

# ---- the SQL out of the C file ----
mkdir -p "$OUT/pg" "$OUT/sqlite" "$OUT/checks"
HDR=$ROOT/fcgi/store/store_int.h
CFLAGS=(-std=c11 -Wall -Wextra -Werror -I "$ROOT/fcgi")
# shellcheck disable=SC2046
if ! "$CC" "${CFLAGS[@]}" $(pkg-config --cflags sqlite3) -o "$WORK/sql_dump" \
    "$ROOT/tests/pg/sql_dump.c" "$ROOT/fcgi/store/pg_sql.c" "$ROOT/fcgi/store/statements.c"; then
    bad "compile: pg_sql.c with the dump program"
    exit 1
fi
count=$("$WORK/sql_dump" "$OUT") || {
    bad "dump"
    exit 1
}
# The stmt_id names, in enum order.
mapfile -t NAMES < <(sed -n '/^enum stmt_id {/,/^};/p' "$HDR" | grep -o 'S_[A-Z0-9_]*' |
    grep -v '^S_COUNT$')
[ "${#NAMES[@]}" = "$count" ] || {
    bad "stmt_id names: ${#NAMES[@]} parsed, S_COUNT is $count"
    exit 1
}
ok "compile: pg_sql.c, $count statement ids"

# ---- the cluster ----
chmod 755 "$WORK"
mkdir -p "$DATA" "$SOCK"
[ "$(id -u)" = 0 ] && chown postgres: "$DATA" "$SOCK"
t0=$(date +%s.%N)
as_pg "$PGBIN/initdb" -U knowhub --auth=trust -N -D "$DATA" >"$WORK/initdb.log" 2>&1 || {
    cat "$WORK/initdb.log"
    bad "initdb"
    exit 1
}
as_pg "$PGBIN/pg_ctl" -D "$DATA" -l "$DATA/server.log" \
    -o "-c listen_addresses='' -k $SOCK -c fsync=off" -w start >/dev/null || {
    cat "$DATA/server.log"
    bad "pg_ctl start"
    exit 1
}
ok "cluster up in $(printf '%.1f' "$(echo "$(date +%s.%N) - $t0" | bc)") s"
# A database whose default collation is not bytewise (ICU en-US) when the
# server has ICU: the schema's COLLATE "C" must make the order bytewise anyway.
if psql_ -d postgres -c "CREATE DATABASE $DB TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'" 2>/dev/null ||
    psql_ -d postgres -c "CREATE DATABASE $DB TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'" 2>/dev/null; then
    ok "database: default collation ICU en-US (in its order 'a/' < 'a&c' < 'a0' and 'a' < 'B': $(q -c "SELECT 'a/' < 'a&c' AND 'a&c' < 'a0' AND 'a' < 'B'"))"
else
    psql_ -d postgres -c "CREATE DATABASE $DB" || exit 1
    ok "database: default collation $(q -c "SELECT datcollate FROM pg_database WHERE datname = current_database()")"
fi

# ---- the schema, as one text (PQexec: one implicit transaction) ----
if q -c "$(cat "$OUT/schema.sql")" >"$WORK/schema.log" 2>&1; then
    tables=$(q -c "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
    triggers=$(q -c "SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal")
    ok "schema: $tables tables, $triggers triggers, version $(q -c "SELECT version FROM schema_version")"
else
    cat "$WORK/schema.log"
    bad "schema does not load"
    exit 1
fi

# ---- every statement ----
# The binding letters of each statement in the C code (stmt_bind / bind_*):
# t text; i, l, L integers; h, b bytea. '-' for none.
declare -A BIND
K_DOC=tttttittitttttt # ?4..?18, bind_document
while read -r name letters; do BIND[$name]=$letters; done <<LETTERS
S_READ_BEGIN -
S_READ_END -
S_SPACE_ENSURE tt
S_TOKEN_COUNT -
S_TOKEN_INSERT thtttt
S_TOKEN_GET t
S_TOKEN_TOUCH tt
S_TOKEN_REVOKE tt
S_TOKEN_ALL -
S_K_ID_EXISTS t
S_K_INSERT ttt${K_DOC}ti
S_K_GET tti
S_K_GET_MANY tt
S_K_ACTIVE tt
S_K_LIST titll
S_K_COUNT tit
S_K_SPACE_OF tt
S_CASE_INSERT tttttttttt
S_CASE_BUMP_HELPFUL t
S_CASE_BUMP_HARMFUL t
S_CASES ttl
S_K_SET_SCORE ttit
S_FEEDBACK_INSERT ttttt
S_K_DELETE ttt
S_REVISION_ADD tttt
S_REVISIONS tt
S_REVISION_DOC ttl
S_K_RESTORE tttt
S_AUDIT ttttt
S_K_BY_PATH ttt
S_K_UPDATE ttL${K_DOC}t
S_SCAN_CATEGORY ttti
S_SCAN_ALWAYS_RULES t
S_SCAN_ACTIVE ttti
S_SCAN_DELETED tt
S_MATCH ttitlL
S_MATCH_HEAD ttitlL
S_TRACE_UPSERT tttt
S_TRACE_INSERT ttt
S_TRACE_GET tt
S_TRACE_LIST tll
S_TRACE_COUNT t
S_LOG_ADD ttttlt
S_LOG_ALL ttll
S_LOG_PENDING ttll
S_LOG_COUNT tti
S_LOG_ENTRY tl
S_LOG_FIND_PENDING ttt
S_LOG_SET_EVAL ltttt
S_ROLLUP_INSERT ttttt
S_BUMP_IRRELEVANT t
S_BUMP_UNUSED t
S_BUMP_NEUTRAL t
S_TRACE_TASK tt
S_LOGIN_INSERT htttt
S_LOGIN_GET ht
S_LOGIN_DELETE h
S_LOGIN_EXPIRE t
S_SESSION_PUT ttttt
S_SESSION_GET tt
S_SESSION_LIST t
S_SESSION_DELETE tt
S_LLM_CALL_ADD tttllltt
S_LLM_USAGE tt
S_JOB_CREATE tttttt
S_JOB_GET tt
S_JOB_OPEN tt
S_JOB_MERGE ttt
S_IDEM_GET ttt
S_IDEM_PUT ttttt
S_IDEM_EXPIRE t
S_JOB_LIST tl
S_JOB_COUNTS -
S_SPACE_COUNTS -
S_JOB_CLAIM ttt
S_JOB_WAITING t
S_JOB_PROGRESS tllttt
S_JOB_FINISH tttttt
S_JOB_REQUEUE tt
S_FEEDBACK_MARK lt
S_MERGE_COUNTERS tt
S_MERGE_CASES tt
S_MERGE_TOMBSTONE ttttl
S_DATA_VERSION -
S_GENERATION -
S_CASES_PAGE ttll
S_CASES_COUNT tt
S_K_MOVE ttlttttit
S_K_FOLDER_TAKEN tttt
S_K_FILE_TAKEN tttt
S_K_PLACE t
S_REVISION_TIME ttl
S_SESSION_PUT_IF tttttt
S_VEC_PUT Lttltibt
S_VEC_TOUCH Ll
S_VEC_DEQUEUE Ll
S_VEC_TAKE llt
S_VEC_NEXT t
S_VEC_FILL tt
S_VEC_FORGET_DIGESTS t
S_VEC_QUEUED t
S_VEC_COUNTS tt
S_VEC_SINCE ttLl
S_VEC_STAMP -
S_VEC_DIM t
S_K_TERMS_SOURCE t
S_K_TERMS_PUT LtLttt
S_EMBED_TURN_TAKE tl
S_EMBED_TURN_GIVE t
S_SX_DIRTY -
S_SX_DIRTY_COUNT -
S_SX_UNDIRTY L
S_SX_SOURCE L
S_SX_DOC_GET L
S_SX_DOC_PUT Lt
S_SX_DOC_DELETE L
S_SX_DF_ADD tt
S_SX_DF_PRUNE tt
S_SX_SPACE_ADD tLLLLLL
S_SX_STATS_GET tt
S_SX_STAMP_NEXT t
S_SX_LOG_ADD tLt
S_SX_LOG_FLOOR tL
S_SX_LOG_PRUNE tL
S_SX_STAMP t
S_SX_DOCS t
S_SX_LOG_SINCE tL
S_SX_META_GET -
S_SX_META_SET L
S_OVERVIEW_CATEGORIES t
S_OVERVIEW_TRACES tt
S_OVERVIEW_RECENT tl
S_OVERVIEW_INJECTED tl
S_OVERVIEW_HARMFUL tl
S_SUB_PUT ttttt
S_SUB_DELETE ttt
S_SUB_END tt
S_SUB_COUNT t
S_SUB_MATCH tt
S_SUB_TOUCH ttt
S_SUB_EXPIRE t
S_REVIEW_POLICY_GET tt
S_REVIEW_POLICY_SET tttt
S_PROPOSAL_INSERT ttttttlttttttttttt
S_PROPOSAL_GET tt
S_PROPOSAL_LIST ttll
S_PROPOSAL_COUNT tt
S_PROPOSAL_DECIDE ttttttttt
S_PROPOSAL_COUNTS t
S_PROPOSAL_TOTALS -
S_TOKEN_REVIEW_SET tt
S_REVIEW_PROMOTE_GET t
S_REVIEW_PROMOTE_SET tttl
S_PROPOSAL_PENDING_DOCS tl
S_LOG_ADD_PROPOSAL ttttlttt
S_PROPOSAL_VERDICTS ttl
S_PROPOSAL_MEMBER_ADD tttl
S_PROPOSAL_MEMBERS tt
S_PROPOSAL_MEMBER_HELD tt
S_LINK_ADD ttttttt
S_LINK_GET tttt
S_LINK_REMOVE tttt
S_LINKS_OF ttl
S_LINKS_CONTRADICTS_OF tt
S_LINKS_DROP_SUPERSEDES tt
S_EVIDENCE_POLICY_GET t
S_EVIDENCE_POLICY_SET tttl
S_EVIDENCE_VERDICTS tt
S_K_PATHS_RANGE ttttl
S_CONFLICT_ITEM_FIND ttt
S_TIME_SET tttti
S_TIME_CLEAR tt
S_TIME_GET tt
S_TIME_EXPIRED tt
S_TIME_NEXT_EXPIRY t
S_TIME_STALE ttll
S_TIME_STALE_COUNT tt
S_TIME_REVIEW_DUE ttl
S_TIME_DUE_SPACES t
S_K_WHOLE ttill
LETTERS

# Does PostgreSQL type $n (type) take what letter binds (as text or bytea)?
type_fits() {
    case "$1:$2" in
    t:text | t:json | t:tsquery | t:tsvector) return 0 ;;
    [ilL]:smallint | [ilL]:integer | [ilL]:bigint) return 0 ;;
    [hb]:bytea) return 0 ;;
    esac
    return 1
}

: >"$WORK/prepare_all.sql"
stmt_fails=0
for ((i = 0; i < count; i++)); do
    name=${NAMES[$i]}
    pg=$OUT/pg/$i.sql
    lite=$OUT/sqlite/$i.sql
    # SQLite's alone: PRAGMA data_version, for the full-text compaction;
    # the changes rows, which PostgreSQL sends as notifications instead.
    if [[ "$name" =~ ^(S_DATA_VERSION|S_CHANGES_LAST|S_CHANGES_SINCE|S_CHANGES_TRIM)$ ]] && [ ! -f "$pg" ]; then
        ok "$name: SQLite only, no PostgreSQL text"
        continue
    fi
    if [ ! -f "$pg" ]; then
        bad "$name: no PostgreSQL text"
        stmt_fails=$((stmt_fails + 1))
        continue
    fi
    sql=$(cat "$pg")
    why=
    # The same parameters as SQLite's ?1..?N.
    if [ -f "$lite" ]; then
        nl=$(grep -o '?[0-9]*' "$lite" | tr -d '?' | sort -n | tail -1)
        np=$(grep -o '\$[0-9]*' "$pg" | tr -d '$' | sort -n | tail -1)
        [ "${nl:-0}" = "${np:-0}" ] || why="$why; parameters: SQLite ?1..?${nl:-0}, PostgreSQL \$1..\$${np:-0}"
    fi
    case "$sql" in
    BEGIN* | COMMIT*)
        # Not PREPAREable in SQL (libpq's PQprepare takes it): run it.
        if [ "$name" = S_READ_BEGIN ]; then
            out=$(q -c "$sql" -c "SELECT current_setting('transaction_isolation'), current_setting('transaction_read_only')" -c "COMMIT" 2>&1)
            [ "$out" = "repeatable read|on" ] || why="$why; $out"
        else
            out=$(q -c "BEGIN" -c "$sql" 2>&1) || why="$why; $out"
        fi
        types="(run)"
        ;;
    *)
        lower=$(echo "$name" | tr 'A-Z' 'a-z')
        printf 'PREPARE %s AS %s;\n' "$lower" "$sql" >>"$WORK/prepare_all.sql"
        # Parameter types from pg_prepared_statements; result types from
        # psql's \gdesc of an EXECUTE (PostgreSQL 15 has no result_types).
        nulls=
        for ((k = 0; k < ${np:-0}; k++)); do nulls=${nulls:+$nulls,}NULL; done
        if out=$(printf '%s\n' "PREPARE s$i AS $sql;" \
            "SELECT array_to_string(parameter_types, ',') FROM pg_prepared_statements WHERE name = 's$i';" \
            "EXECUTE s$i${nulls:+($nulls)} \\gdesc" "DEALLOCATE s$i;" | q 2>&1); then
            ptypes=$(echo "$out" | head -1)
            rtypes=$(echo "$out" | tail -n +2 | grep '|' | cut -d'|' -f2 | paste -sd, -)
            types="($ptypes) -> ($rtypes)"
            letters=${BIND[$name]:-?}
            [ "$letters" = - ] && letters=
            IFS=, read -r -a pt <<<"$ptypes"
            if [ "$letters" = "?" ]; then
                why="$why; no binding letters known for it"
            elif [ "${#pt[@]}" != "${#letters}" ]; then
                why="$why; ${#pt[@]} parameters, the C code binds ${#letters}"
            else
                for ((k = 0; k < ${#letters}; k++)); do
                    type_fits "${letters:$k:1}" "${pt[$k]}" ||
                        why="$why; \$$((k + 1)) is ${pt[$k]}, bound '${letters:$k:1}'"
                done
            fi
            case ",$rtypes," in
            *,boolean,* | *,numeric,* | *,unknown,*) why="$why; result types $rtypes" ;;
            esac
        else
            why="$why; $(echo "$out" | head -3 | tr '\n' ' ')"
            types=
        fi
        ;;
    esac
    if [ -n "$why" ]; then
        bad "$name ${why#; }"
        stmt_fails=$((stmt_fails + 1))
    else
        echo "$name $types" >>"$WORK/types.log"
    fi
done
# The same through libpq, as the store will prepare them (when libpq's
# headers are here).
idx() { for i in "${!NAMES[@]}"; do [ "${NAMES[$i]}" = "$1" ] && echo "$i"; done; }
if pkg-config --exists libpq 2>/dev/null; then
    # shellcheck disable=SC2046
    if "$CC" -std=c11 -Wall -Wextra -Werror $(pkg-config --cflags libpq) -o "$WORK/sql_probe" \
        "$ROOT/tests/pg/sql_probe.c" $(pkg-config --libs libpq); then
        "$WORK/sql_probe" "host=$SOCK user=knowhub dbname=$DB" "$OUT" "$(idx S_READ_BEGIN)" \
            "$(idx S_READ_END)" "$(idx S_TOKEN_GET)" "$(idx S_LOGIN_GET)" "$(idx S_GENERATION)" \
            >"$WORK/probe.out" 2>&1
        while read -r line; do
            case "$line" in "ok   "*) echo "$line" ;; *) bad "${line#FAIL }" ;; esac
        done <"$WORK/probe.out"
    else
        bad "probe: sql_probe.c does not compile"
    fi
else
    echo "skip probe: no libpq headers (libpq-dev)"
fi
[ "$stmt_fails" = 0 ] && ok "statements: all $count prepare, parameter and result types as bound and read"
if [ -n "${VERBOSE:-}" ]; then cat "$WORK/types.log"; fi

# ---- the checks ----
run_checks() { # $1: when
    local n=0 name v bad_ones=
    for f in "$OUT"/checks/*.name; do
        name=$(cat "$f")
        # The scenario writes entries with SQL alone: their BM25F records are
        # made in C at commit (store/search_index.c), which the HTTP pass
        # on PostgreSQL checks with knowhub check.
        case "$name" in search_docs | search_stats) [ "$1" = "empty schema" ] || continue ;; esac
        v=$(q -c "$(cat "${f%.name}.sql")" 2>&1)
        n=$((n + 1))
        [ "$v" = 0 ] || bad_ones="$bad_ones $name=$v"
    done
    if [ -z "$bad_ones" ]; then ok "checks ($1): all $n answer 0"; else bad "checks ($1):$bad_ones"; fi
}
run_checks "empty schema"

# ---- the statements and triggers at work ----
cat >"$WORK/scenario.sql" <<'SQL'
\i prepare_all.sql
\set T0 '''2026-12-03 10:00:00'''
SELECT sum(n) AS g FROM generation \gset
EXECUTE s_space_ensure('s1', :T0);
EXECUTE s_space_ensure('s1', :T0);
EXECUTE s_token_insert('tok1', decode(repeat('ab', 32), 'hex'), 's1', 'admin', 'l', :T0);
SELECT CASE WHEN sum(n) > :g THEN 'ok   ' ELSE 'FAIL ' END || 'generation: grows after a write' FROM generation;
SELECT sum(n) AS g FROM generation \gset
UPDATE tokens SET last_used_at = '2026-12-03 10:00:05' WHERE id = 'tok1';
EXECUTE s_token_touch('tok1', '2026-12-03 10:01:00');
SELECT CASE WHEN last_used_at = '2026-12-03 10:00:05' THEN 'ok   ' ELSE 'FAIL ' END || 'S_TOKEN_TOUCH: nothing within 60 s (' || last_used_at || ')' FROM tokens WHERE id = 'tok1';
EXECUTE s_token_touch('tok1', '2026-12-03 10:01:06');
SELECT CASE WHEN last_used_at = '2026-12-03 10:01:06' THEN 'ok   ' ELSE 'FAIL ' END || 'S_TOKEN_TOUCH: written after 60 s (' || last_used_at || ')' FROM tokens WHERE id = 'tok1';
SELECT CASE WHEN sum(n) = :g THEN 'ok   ' ELSE 'FAIL ' END || 'generation: unchanged by UPDATE tokens SET last_used_at' FROM generation;
EXECUTE s_token_get('tok1') \gset tok_
SELECT CASE WHEN :'tok_coalesce' = sum(n)::text THEN 'ok   ' ELSE 'FAIL ' END || 'S_TOKEN_GET: its last column is the generation' FROM generation;
EXECUTE s_token_revoke('tok1', '2026-12-03 10:02:00');
SELECT CASE WHEN sum(n) > :g THEN 'ok   ' ELSE 'FAIL ' END || 'generation: grows with a revocation' FROM generation;

EXECUTE s_k_insert('k1', 's1', :T0, 'rules', 'a.md', 'A', '', '["x","y"]', 1, 'scen', 'hello world', 1, 'manual', '[]', '', '', '{"m":1}', 'doc', '', 3);
EXECUTE s_revision_add('k1', 'alice', 'create', :T0);
EXECUTE s_k_insert('k2', 's1', :T0, 'rules', 'a/b.md', 'B', '', '[]', 1, '', 'other words', 1, 'manual', '[]', '', '', '{}', '', '', 3);
EXECUTE s_revision_add('k2', 'alice', 'create', :T0);
SELECT CASE WHEN count(*) = 2 THEN 'ok   ' ELSE 'FAIL ' END || 'trigger: an inserted active entry is queued for embedding' FROM embed_queue;
EXECUTE s_k_terms_source('k1') \gset k1_
EXECUTE s_k_terms_put(:k1_seq, :'k1_space', :k1_types, :'k1_category', to_tsvector('simple', :'k1_title' || ' ' || :'k1_content')::text, to_tsvector('simple', :'k1_title' || ' ' || :'k1_content')::text);
EXECUTE s_k_terms_source('k2') \gset k2_
EXECUTE s_k_terms_put(:k2_seq, :'k2_space', :k2_types, :'k2_category', to_tsvector('simple', :'k2_content')::text, to_tsvector('simple', :'k2_content')::text);
EXECUTE s_sx_doc_put(:k1_seq, '');
EXECUTE s_sx_doc_put(:k2_seq, '');
EXECUTE s_match('hello', 's1', 0, NULL, 10, 9223372036854775807) \gset m_
SELECT CASE WHEN :'m_id' = 'k1' AND :'m_title' = 'A' AND :'m_always_apply' = '1' THEN 'ok   ' ELSE 'FAIL ' END || 'S_MATCH: finds k1 by its terms';
EXECUTE s_match_head('hello', 's1', 1, 'rules', 10, :k1_seq + 1) \gset mh_
SELECT CASE WHEN :'mh_id' = 'k1' THEN 'ok   ' ELSE 'FAIL ' END || 'S_MATCH_HEAD: with a types and category filter';
EXECUTE s_k_folder_taken('s1', 'rules', 'a', 'k1') \g /dev/null
SELECT CASE WHEN :ROW_COUNT = 1 THEN 'ok   ' ELSE 'FAIL ' END || 'S_K_FOLDER_TAKEN: a/b.md is inside the folder a (bytewise order)';
EXECUTE s_k_insert('k3', 's1', :T0, 'experiences', 'a&c.md', 'C', '', '[]', 2, '', '', 0, 'manual', '[]', '', '', '{}', '', '', 3);
EXECUTE s_k_insert('k4', 's1', :T0, 'experiences', 'B.md', 'D', '', '[]', 2, '', '', 0, 'manual', '[]', '', '', '{}', '', '', 3);
EXECUTE s_k_folder_taken('s1', 'experiences', 'a', 'zz') \g /dev/null
SELECT CASE WHEN :ROW_COUNT = 0 THEN 'ok   ' ELSE 'FAIL ' END || 'S_K_FOLDER_TAKEN: a&c.md is not inside the folder a (bytewise order)';
EXECUTE s_scan_category('s1', 'experiences', '', 10) \g /dev/null
SELECT CASE WHEN :ROW_COUNT = 2 THEN 'ok   ' ELSE 'FAIL ' END || 'S_SCAN_CATEGORY: 2 rows';
SELECT CASE WHEN string_agg(path, ' ' ORDER BY path) = 'B.md a&c.md' THEN 'ok   ' ELSE 'FAIL ' END || 'collation: ORDER BY path is bytewise (' || string_agg(path, ' ' ORDER BY path) || ')' FROM knowledge WHERE category = 'experiences';
EXECUTE s_revision_add('k3', 'alice', 'create', :T0);
EXECUTE s_revision_add('k4', 'alice', 'create', :T0);
EXECUTE s_k_terms_source('k3') \gset k3_
EXECUTE s_k_terms_put(:k3_seq, :'k3_space', :k3_types, :'k3_category', ''::tsvector::text, ''::tsvector::text);
EXECUTE s_k_terms_source('k4') \gset k4_
EXECUTE s_k_terms_put(:k4_seq, :'k4_space', :k4_types, :'k4_category', ''::tsvector::text, ''::tsvector::text);
SELECT CASE WHEN (document::json -> 'tags')::text = '["x","y"]' AND document::json ->> 'types' = '1' AND (document::json -> 'meta' ->> 'm') = '1' THEN 'ok   ' ELSE 'FAIL ' END || 'S_REVISION_ADD: the snapshot JSON: ' || left(document, 60) || '...' FROM knowledge_revisions WHERE knowledge_id = 'k1';

EXECUTE s_vec_put(:k1_seq, 's1', 'm', 1, 'dg', 2, '\x0000803f00000040'::bytea, :T0);
EXECUTE s_vec_dequeue(:k1_seq, 1);
SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM embed_queue WHERE knowledge_seq = :k1_seq) THEN 'ok   ' ELSE 'FAIL ' END || 'S_VEC_DEQUEUE: done for the entry''s version';
SELECT stamp AS st FROM vectors WHERE knowledge_seq = :k1_seq \gset
EXECUTE s_vec_stamp \gset vs_
SELECT CASE WHEN :'vs_coalesce' = :'st' THEN 'ok   ' ELSE 'FAIL ' END || 'S_VEC_STAMP: the last stamp (' || :'st' || ')';
EXECUTE s_k_delete('k1', 's1', '2026-12-03 10:05:00');
SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM knowledge_terms WHERE seq = :k1_seq) THEN 'ok   ' ELSE 'FAIL ' END || 'trigger: a deleted entry''s knowledge_terms row is gone';
SELECT CASE WHEN stamp > :st THEN 'ok   ' ELSE 'FAIL ' END || 'trigger: the status change moved the vector''s stamp (' || :st || ' -> ' || stamp || ')' FROM vectors WHERE knowledge_seq = :k1_seq;
SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM embed_queue WHERE knowledge_seq = :k1_seq) THEN 'ok   ' ELSE 'FAIL ' END || 'trigger: a deleted entry is not queued';
EXECUTE s_revision_doc('k1', 's1', 1) \gset rd_
EXECUTE s_k_restore('k1', 's1', :'rd_document', '2026-12-03 10:06:00');
SELECT CASE WHEN status = 'active' AND tags = '["x","y"]' AND types = 1 AND score = 3 AND meta = '{"m":1}' AND always_apply = 1 AND version = 3 AND document = 'doc' THEN 'ok   ' ELSE 'FAIL ' END || 'S_K_RESTORE: the snapshot''s fields back (tags ' || tags || ', meta ' || meta || ')' FROM knowledge WHERE id = 'k1';
SELECT CASE WHEN EXISTS (SELECT 1 FROM embed_queue WHERE knowledge_seq = :k1_seq) THEN 'ok   ' ELSE 'FAIL ' END || 'trigger: a restored entry is queued again';
EXECUTE s_revision_add('k1', 'alice', 'revert', '2026-12-03 10:06:00');
EXECUTE s_k_terms_put(:k1_seq, 's1', 1, 'rules', to_tsvector('simple', 'hello world')::text, to_tsvector('simple', 'hello world')::text);
EXECUTE s_k_update('k1', 's1', 3, 'experiences', 'a.md', 'A', '', '["x"]', 2, 'scen', 'hello world', 0, 'manual', '[]', '', '', '{}', '', '2026-12-03 10:07:00');
EXECUTE s_revision_add('k1', 'alice', 'update', '2026-12-03 10:07:00');
SELECT CASE WHEN types = 2 AND category = 'experiences' THEN 'ok   ' ELSE 'FAIL ' END || 'trigger: knowledge_terms follows types and category' FROM knowledge_terms WHERE seq = :k1_seq;
EXECUTE s_k_update('k1', 's1', 3, 'experiences', 'a.md', 'A', '', '["x"]', 2, 'scen', 'x', 0, 'manual', '[]', '', '', '{}', '', '2026-12-03 10:08:00');
SELECT CASE WHEN version = 4 THEN 'ok   ' ELSE 'FAIL ' END || 'S_K_UPDATE: a stale expected version changes nothing' FROM knowledge WHERE id = 'k1';
EXECUTE s_k_get('k2', 's1', 0) \gset kg_
EXECUTE s_k_delete('k2', 's1', '2026-12-03 10:09:00');
EXECUTE s_k_terms_put(:k2_seq, 's1', 1, 'rules', to_tsvector('simple', 'x')::text, to_tsvector('simple', 'x')::text);
SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM knowledge_terms WHERE seq = :k2_seq) THEN 'ok   ' ELSE 'FAIL ' END || 'S_K_TERMS_PUT: writes nothing for an entry that is not active';
EXECUTE s_k_count('s1', 0, NULL) \gset kc_
SELECT CASE WHEN :'kc_count' = '3' THEN 'ok   ' ELSE 'FAIL ' END || 'S_K_COUNT: three active entries';
EXECUTE s_k_count('s1', 4, NULL) \gset kc_
SELECT CASE WHEN :'kc_count' = '0' THEN 'ok   ' ELSE 'FAIL ' END || 'S_K_COUNT: types filter';

EXECUTE s_trace_insert('s1', 'tr1', '2026-12-03T10:00:00.000001');
EXECUTE s_log_add('s1', 'tr1', 'k1', '', 1, '2026-12-03T10:00:00.000002') \gset log_
SELECT CASE WHEN :'log_id' = max(id)::text THEN 'ok   ' ELSE 'FAIL ' END || 'S_LOG_ADD: RETURNING id' FROM knowledge_log;
EXECUTE s_log_add('s1', 'tr1', 'k2', '', 2, '2026-12-03T10:00:00.000003');
SELECT CASE WHEN count(*) = 1 THEN 'ok   ' ELSE 'FAIL ' END || 'S_LOG_ADD: nothing for an entry that is not active' FROM knowledge_log;
EXECUTE s_trace_get('s1', 'tr1') \gset tg_
EXECUTE s_feedback_insert('s1', 'k1', 'good', 'bob', :T0) \gset fb_
SELECT CASE WHEN :'fb_seq' = max(seq)::text THEN 'ok   ' ELSE 'FAIL ' END || 'S_FEEDBACK_INSERT: RETURNING seq' FROM knowledge_feedback;
EXECUTE s_llm_call_add('s1', 'p', 'm', 10, 5, 100, 'ok', :T0);
EXECUTE s_llm_call_add('s1', 'p', 'm', 20, 5, 300, 'error', :T0);
EXECUTE s_llm_usage('s1', '') \gset u_
SELECT CASE WHEN :'u_count' = '2' THEN 'ok   ' ELSE 'FAIL ' END || 'S_LLM_USAGE: counted';
EXECUTE s_generation \gset dv_
SELECT CASE WHEN :'dv_coalesce' = sum(n)::text THEN 'ok   ' ELSE 'FAIL ' END || 'S_GENERATION: the generation (' || :'dv_coalesce' || ')' FROM generation;
EXECUTE s_llm_call_add('s1', 'p', 'm', 1, 1, 1, 'ok', :T0);
EXECUTE s_generation \gset dv2_
SELECT CASE WHEN :'dv2_coalesce' = :'dv_coalesce' THEN 'ok   ' ELSE 'FAIL ' END || 'S_GENERATION: a row of the LLM ledger leaves it alone';
EXECUTE s_job_create('j1', 's1', 'kind', '{}', 'bob', '2026-12-03T10:00:00.000000');
EXECUTE s_job_claim('2026-12-03T10:00:01.000000', 'node-a', '2026-12-03T10:00:31.000000') \gset jc_
EXECUTE s_job_progress('j1', 1, 2, '2026-12-03T10:00:02.000000', '2026-12-03T10:00:32.000000', 'node-b');
SELECT CASE WHEN progress = 0 THEN 'ok   ' ELSE 'FAIL ' END || 'S_JOB_PROGRESS: only for the node holding the job' FROM jobs WHERE id = 'j1';
EXECUTE s_job_finish('j1', 'done', '{}', NULL, '2026-12-03T10:00:03.000000', 'node-a');
SELECT CASE WHEN status = 'done' AND lease_until IS NULL THEN 'ok   ' ELSE 'FAIL ' END || 'S_JOB_FINISH: by its node' FROM jobs WHERE id = 'j1';
EXECUTE s_job_requeue('2026-12-03T10:00:04.000000', NULL);
DELETE FROM jobs;
EXECUTE s_embed_turn_take('node-a', 60000) \gset et_
SELECT CASE WHEN :et_taken = 1 THEN 'ok   ' ELSE 'FAIL ' END || 'S_EMBED_TURN_TAKE: a free turn is taken';
EXECUTE s_embed_turn_take('node-b', 60000) \gset et_
SELECT CASE WHEN :et_taken = 0 AND :'et_holder' = 'node-a' AND :et_left_ms BETWEEN 50000 AND 60000 THEN 'ok   ' ELSE 'FAIL ' END || 'S_EMBED_TURN_TAKE: not while another node''s lease runs (' || :'et_holder' || ', ' || :et_left_ms || ' ms left)';
EXECUTE s_embed_turn_take('node-a', 60000) \gset et_
SELECT CASE WHEN :et_taken = 1 THEN 'ok   ' ELSE 'FAIL ' END || 'S_EMBED_TURN_TAKE: renewed by its holder';
UPDATE embed_turn SET expires_at = clock_timestamp() - interval '1 second';
EXECUTE s_embed_turn_take('node-b', 60000) \gset et_
SELECT CASE WHEN :et_taken = 1 THEN 'ok   ' ELSE 'FAIL ' END || 'S_EMBED_TURN_TAKE: taken over once the lease ran out';
EXECUTE s_embed_turn_give('node-a');
SELECT CASE WHEN node = 'node-b' AND expires_at > clock_timestamp() THEN 'ok   ' ELSE 'FAIL ' END || 'S_EMBED_TURN_GIVE: not by another node' FROM embed_turn;
EXECUTE s_embed_turn_give('node-b');
EXECUTE s_embed_turn_take('node-a', 60000) \gset et_
SELECT CASE WHEN :et_taken = 1 THEN 'ok   ' ELSE 'FAIL ' END || 'S_EMBED_TURN_GIVE: given back, the turn is free';
DELETE FROM embed_turn;
EXECUTE s_review_policy_set('s1', 'agent_writes', 'token:a', '2026-12-03T10:00:00.000000');
EXECUTE s_review_policy_set('s1', 'all', 'token:b', '2026-12-03T10:00:01.000000');
EXECUTE s_review_promote_set('s1', 'token:b', '2026-12-03T10:00:01.000000', 5);
SELECT CASE WHEN policy = 'all' AND actor = 'token:b' THEN 'ok   ' ELSE 'FAIL ' END || 'S_REVIEW_POLICY_SET: set again, one row' FROM review_policies WHERE space = 's1';
SELECT CASE WHEN promote_after = 5 THEN 'ok   ' ELSE 'FAIL ' END || 'S_REVIEW_PROMOTE_SET' FROM review_promotion WHERE space = 's1';
EXECUTE s_proposal_insert('p1', 's1', 'create', 'pending', 'entry', NULL, 0, 'experiences', '', 'doc', NULL, 't1', 'token:t1', '', '', 'agent', '[]', '2026-12-03T10:00:02.000000');
EXECUTE s_log_add_proposal('s1', 'tr1', 'p1', 'g1', 1, '2026-12-03T10:00:02.500000', 'task', 'content') \gset lp_
EXECUTE s_proposal_pending_docs('s1', 10) \gset pd_
SELECT CASE WHEN :'pd_id' = 'p1' AND :'lp_id' <> '' THEN 'ok   ' ELSE 'FAIL ' END || 'S_PROPOSAL_PENDING_DOCS, S_LOG_ADD_PROPOSAL: the pending one, logged';
EXECUTE s_proposal_decide('p1', 's1', 'approved', 'approve', NULL, 'token:e', '2026-12-03T10:00:03.000000', NULL, 'pending');
EXECUTE s_log_add_proposal('s1', 'tr1', 'p1', 'g1', 2, '2026-12-03T10:00:03.500000', 'task', 'content');
SELECT CASE WHEN count(*) = 1 THEN 'ok   ' ELSE 'FAIL ' END || 'S_LOG_ADD_PROPOSAL: a pending proposal only' FROM knowledge_log WHERE knowledge_id = 'p1';
UPDATE knowledge_log SET eval_status = 'helpful' WHERE knowledge_id = 'p1';
SELECT CASE WHEN count(*) = 1 THEN 'ok   ' ELSE 'FAIL ' END || 'S_PROPOSAL_VERDICTS: the helpful verdict' FROM (SELECT 1 FROM knowledge_log WHERE space = 's1' AND knowledge_id = 'p1' AND eval_status IN ('helpful', 'harmful')) v;
DELETE FROM knowledge_log WHERE knowledge_id = 'p1';
EXECUTE s_proposal_insert('p2', 's1', 'slim_merge', 'pending', 'slim', 'k1', 3, 'experiences', 'a.md', 'doc', 'base', NULL, 'job', '', '', 'slim', '[]', '2026-12-03T10:00:02.100000');
EXECUTE s_proposal_member_add('s1', 'p2', 'k2', 4);
EXECUTE s_proposal_members('s1', 'p2') \gset pm_
SELECT CASE WHEN :'pm_knowledge_id' = 'k2' AND :pm_base_version = 4 THEN 'ok   ' ELSE 'FAIL ' END || 'S_PROPOSAL_MEMBER_ADD, S_PROPOSAL_MEMBERS: the member';
EXECUTE s_proposal_member_held('s1', 'k1') \gset mh1_
EXECUTE s_proposal_member_held('s1', 'k2') \gset mh2_
SELECT CASE WHEN :'mh1_id' = 'p2' AND :'mh2_id' = 'p2' THEN 'ok   ' ELSE 'FAIL ' END || 'S_PROPOSAL_MEMBER_HELD: as survivor and as member';
EXECUTE s_proposal_decide('p2', 's1', 'rejected', 'reject', 'no', 'token:e', '2026-12-03T10:00:02.200000', NULL, 'pending');
SELECT CASE WHEN count(*) = 0 THEN 'ok   ' ELSE 'FAIL ' END || 'S_PROPOSAL_MEMBER_HELD: not once decided' FROM proposals p WHERE p.space = 's1' AND p.kind = 'slim_merge' AND p.state IN ('pending', 'quarantined');
SELECT version AS k3v FROM knowledge WHERE id = 'k3' \gset
SELECT version AS k4v FROM knowledge WHERE id = 'k4' \gset
EXECUTE s_proposal_insert('p3', 's1', 'conflict', 'pending', 'check', 'k3', :k3v, 'experiences', 'a&c.md', 'doc', NULL, NULL, 'token:t1', '', '', 'local', '["why"]', '2026-12-03T10:00:02.300000');
EXECUTE s_proposal_member_add('s1', 'p3', 'k4', :k4v);
EXECUTE s_conflict_item_find('s1', 'k4', 'k3') \gset cf1_
SELECT CASE WHEN :'cf1_id' = 'p3' AND :'cf1_state' = 'pending' THEN 'ok   ' ELSE 'FAIL ' END || 'S_CONFLICT_ITEM_FIND: the pending item, either way round';
EXECUTE s_proposal_decide('p3', 's1', 'rejected', 'dismiss', 'fine', 'token:e', '2026-12-03T10:00:02.400000', NULL, 'pending');
EXECUTE s_conflict_item_find('s1', 'k3', 'k4') \gset cf2_
SELECT CASE WHEN :'cf2_id' = 'p3' AND :'cf2_state' = 'rejected' THEN 'ok   ' ELSE 'FAIL ' END || 'S_CONFLICT_ITEM_FIND: dismissed, both sides at its versions';
UPDATE knowledge SET version = version + 1 WHERE id = 'k4';
EXECUTE s_conflict_item_find('s1', 'k3', 'k4') \g /dev/null
SELECT CASE WHEN :ROW_COUNT = 0 THEN 'ok   ' ELSE 'FAIL ' END || 'S_CONFLICT_ITEM_FIND: not once a side changed';
UPDATE knowledge SET version = version - 1 WHERE id = 'k4';
EXECUTE s_proposal_decide('p1', 's1', 'rejected', 'reject', 'no', 'token:f', '2026-12-03T10:00:04.000000', NULL, 'pending');
SELECT CASE WHEN state = 'approved' AND decided_by = 'token:e' THEN 'ok   ' ELSE 'FAIL ' END || 'S_PROPOSAL_DECIDE: only from the state read' FROM proposals WHERE id = 'p1';
EXECUTE s_k_paths_range('s1', 'experiences', 'B-', 'B/', 10) \gset pr_
SELECT CASE WHEN :'pr_path' = 'B.md' THEN 'ok   ' ELSE 'FAIL ' END || 'S_K_PATHS_RANGE: the names of a slug, by bytes';
EXECUTE s_links_contradicts_of('s1', '["k3", "k4"]') \g /dev/null
SELECT CASE WHEN :ROW_COUNT = 0 THEN 'ok   ' ELSE 'FAIL ' END || 'S_LINKS_CONTRADICTS_OF: none yet';
SELECT sum(n) AS g FROM generation \gset
EXECUTE s_link_add('s1', 'k3', 'k4', 'contradicts', 'alice', 'why', :T0);
SELECT CASE WHEN sum(n) > :g THEN 'ok   ' ELSE 'FAIL ' END || 'generation: grows with a link' FROM generation;
EXECUTE s_link_add('s1', 'k3', 'k4', 'contradicts', 'bob', 'again', :T0);
SELECT CASE WHEN count(*) = 1 AND min(actor) = 'alice' THEN 'ok   ' ELSE 'FAIL ' END || 'S_LINK_ADD: again changes nothing' FROM knowledge_links;
EXECUTE s_link_get('s1', 'k3', 'k4', 'contradicts') \gset lg_
SELECT CASE WHEN :'lg_actor' = 'alice' AND :'lg_reason' = 'why' THEN 'ok   ' ELSE 'FAIL ' END || 'S_LINK_GET: the link';
EXECUTE s_link_add('s1', 'k4', 'k3', 'refines', 'alice', '', :T0);
EXECUTE s_links_of('s1', 'k3', 10) \g /dev/null
SELECT CASE WHEN :ROW_COUNT = 2 THEN 'ok   ' ELSE 'FAIL ' END || 'S_LINKS_OF: both ways';
EXECUTE s_links_contradicts_of('s1', '["k4", "k9"]') \gset lc_
SELECT CASE WHEN :'lc_of_id' = 'k4' AND :'lc_id' = 'k3' THEN 'ok   ' ELSE 'FAIL ' END || 'S_LINKS_CONTRADICTS_OF: the other side';
EXECUTE s_link_add('s1', 'k3', 'k4', 'supersedes', 'alice', '', :T0);
EXECUTE s_links_drop_supersedes('s1', 'k4');
EXECUTE s_link_remove('s1', 'k3', 'k4', 'contradicts');
SELECT CASE WHEN string_agg(type, ' ') = 'refines' THEN 'ok   ' ELSE 'FAIL ' END || 'S_LINK_REMOVE, S_LINKS_DROP_SUPERSEDES: one left' FROM knowledge_links;
EXECUTE s_evidence_policy_get('s1') \g /dev/null
SELECT CASE WHEN :ROW_COUNT = 0 THEN 'ok   ' ELSE 'FAIL ' END || 'S_EVIDENCE_POLICY_GET: none set';
SELECT sum(n) AS g FROM generation \gset
EXECUTE s_evidence_policy_set('s1', 'alice', :T0, 30);
EXECUTE s_evidence_policy_set('s1', 'bob', :T0, 90);
EXECUTE s_evidence_policy_get('s1') \gset ep_
SELECT CASE WHEN :ep_half_life_days = 90 AND sum(n) > :g THEN 'ok   ' ELSE 'FAIL ' END || 'S_EVIDENCE_POLICY_SET: set again, the generation grows' FROM generation;
INSERT INTO knowledge_cases(space, knowledge_id, kind, case_id, created_at) VALUES ('s1', 'ev1', 'helpful', 'c1', '2026-12-01 10:00:00'), ('s1', 'ev1', 'helpful', 'c2', '2026-12-01 10:59:59'), ('s1', 'ev1', 'harmful', 'c3', '2026-12-01 11:00:00'), ('s2', 'ev1', 'helpful', 'c4', '2026-12-01 10:00:00');
EXECUTE s_evidence_verdicts('s1', '["ev1", "nothing"]') \g /dev/null
SELECT CASE WHEN :ROW_COUNT = 2 THEN 'ok   ' ELSE 'FAIL ' END || 'S_EVIDENCE_VERDICTS: by kind and hour, in the space';
DELETE FROM knowledge_cases WHERE knowledge_id = 'ev1';
DELETE FROM evidence_policy;
DELETE FROM knowledge_links;
SELECT sum(n) AS g FROM generation \gset
EXECUTE s_time_set('s1', 'k3', '2030-01-01T00:00:00Z', NULL, 0);
SELECT CASE WHEN sum(n) > :g THEN 'ok   ' ELSE 'FAIL ' END || 'generation: grows with a time' FROM generation;
EXECUTE s_time_set('s1', 'k4', '2031-01-01T00:00:00Z', '2030-06-01T00:00:00Z', 1);
EXECUTE s_time_set('s1', 'k3', '2030-02-01T00:00:00Z', NULL, 0);
EXECUTE s_time_get('s1', 'k4') \gset tg_
SELECT CASE WHEN :'tg_review_after' = '2030-06-01T00:00:00Z' AND :tg_pinned = 1 THEN 'ok   ' ELSE 'FAIL ' END || 'S_TIME_SET, S_TIME_GET: the time';
EXECUTE s_time_expired('s1', '2030-07-01T00:00:00Z') \gset te_
EXECUTE s_time_next_expiry('2030-07-01T00:00:00Z') \gset tn_
SELECT CASE WHEN :'te_knowledge_id' = 'k3' AND :'tn_min' = '2031-01-01T00:00:00Z' THEN 'ok   ' ELSE 'FAIL ' END || 'S_TIME_EXPIRED, S_TIME_NEXT_EXPIRY: expired and next';
EXECUTE s_time_stale_count('s1', '2030-07-01T00:00:00Z') \gset tc_
EXECUTE s_time_stale('s1', '2030-07-01T00:00:00Z', 10, 0) \g /dev/null
SELECT CASE WHEN :tc_count = :ROW_COUNT THEN 'ok   ' ELSE 'FAIL ' END || 'S_TIME_STALE, S_TIME_STALE_COUNT: one page, its count';
EXECUTE s_time_review_due('s1', '2030-07-01T00:00:00Z', 10) \g /dev/null
SELECT CASE WHEN :ROW_COUNT <= 1 THEN 'ok   ' ELSE 'FAIL ' END || 'S_TIME_REVIEW_DUE: at most the one due';
EXECUTE s_time_due_spaces('2030-07-01T00:00:00Z') \gset ts_
SELECT CASE WHEN :'ts_space' = 's1' THEN 'ok   ' ELSE 'FAIL ' END || 'S_TIME_DUE_SPACES: the space';
EXECUTE s_time_clear('s1', 'k3');
SELECT CASE WHEN count(*) = 1 THEN 'ok   ' ELSE 'FAIL ' END || 'S_TIME_CLEAR: one left' FROM knowledge_time;
DELETE FROM knowledge_time;
DELETE FROM proposals;
DELETE FROM proposal_members;
DELETE FROM review_policies;
DELETE FROM review_promotion;
DEALLOCATE ALL;
SQL
(cd "$WORK" && q -f scenario.sql) >"$WORK/scenario.out" 2>&1
rc=$?
while read -r line; do
    case "$line" in
    "ok   "*) echo "$line" ;;
    "FAIL "*) bad "${line#FAIL }" ;;
    *) [ -n "$line" ] && bad "scenario: $line" ;;
    esac
done <"$WORK/scenario.out"
[ "$rc" = 0 ] || bad "scenario: psql stopped (exit $rc)"
run_checks "after the scenario"
# The checks see what they are for: break things, count.
broken=$(q -c "ALTER TABLE knowledge DISABLE TRIGGER USER" \
    -c "UPDATE knowledge SET status = 'deleted' WHERE id = 'k1'" \
    -c "INSERT INTO vectors VALUES(999, 's1', 'm', 1, '', 3, '\x00'::bytea, 1, '')" \
    -c "SELECT setval('knowledge_seq_seq', 1)" >/dev/null &&
    for f in "$OUT"/checks/*.name; do
        v=$(q -c "$(cat "${f%.name}.sql")")
        [ "$v" = 0 ] || printf '%s=%s ' "$(cat "$f")" "$v"
    done)
case "$broken" in
*knowledge_terms_stale=1*vectors=1*sequences=1*) ok "checks (broken on purpose): $broken" ;;
*) bad "checks (broken on purpose) do not see it: $broken" ;;
esac

# ---- vector stamps in commit order ----
# While one transaction holds a stamp it has not committed, another writer
# waits for it (here: gives up after lock_timeout) instead of taking the
# next stamp and committing first.
vec_sql=$(cat "$OUT/pg/$(idx S_VEC_PUT).sql")
q -c "INSERT INTO knowledge(seq, id, space, category, path, title, created_at, updated_at)
      VALUES(1001, 'v1', 's1', 'rules', 'v1.md', 'V1', '', ''), (1002, 'v2', 's1', 'rules', 'v2.md', 'V2', '', '')" ||
    bad "vector stamps: insert"
coproc HOLD { q -f - 2>&1; }
printf '%s\n' "PREPARE vp AS $vec_sql;" "BEGIN;" \
    "EXECUTE vp(1001, 's1', 'm', 1, '', 0, ''::bytea, '');" \
    "\\echo held" >&"${HOLD[1]}"
read -r _ <&"${HOLD[0]}"
waited=$(q -c "SET lock_timeout = '300ms'" -c "PREPARE vp AS $vec_sql" \
    -c "EXECUTE vp(1002, 's1', 'm', 1, '', 0, ''::bytea, '')" 2>&1)
if [ -n "${HOLD_PID:-}" ]; then
    printf '%s\n' "COMMIT;" "\\echo done" >&"${HOLD[1]}"
    read -r _ <&"${HOLD[0]}"
    hold_in=${HOLD[1]}
    exec {hold_in}>&-
fi
wait
case "$waited" in
*"lock timeout"*) ok "vector stamps: a second writer waits for the first one's commit" ;;
*) bad "vector stamps: a second writer did not wait: $waited" ;;
esac

# ---- S_JOB_CLAIM from 4 sessions at once ----
JOBS=200 PER=70
q -c "INSERT INTO jobs(id, space, kind, status, params, actor, created_at, updated_at)
      SELECT 'job' || lpad(i::text, 3, '0'), 's' || i, 'k', 'queued', '{}', 'a',
             to_char(timestamp '2026-12-03 09:00:00' + i * interval '1 second', 'YYYY-MM-DD\"T\"HH24:MI:SS.US'), ''
      FROM generate_series(1, $JOBS) AS i" || bad "jobs: insert"
claim_sql=$(cat "$OUT/pg/$(idx S_JOB_CLAIM).sql")
# The 4 sessions wait on an advisory lock this session holds, and start
# together when it lets go.
for node in a b c d; do
    {
        echo "PREPARE claim AS $claim_sql;"
        echo "SELECT pg_advisory_lock_shared(4242) \\g /dev/null"
        for ((k = 0; k < PER; k++)); do
            echo "EXECUTE claim('2026-12-03T10:00:00.000000', 'node-$node', '2026-12-03T10:10:00.000000');"
        done
    } >"$WORK/claim-$node.sql"
done
coproc GATE { q -f - 2>&1; }
echo "SELECT pg_advisory_lock(4242) \\g /dev/null" >&"${GATE[1]}"
echo "\\echo locked" >&"${GATE[1]}"
read -r _ <&"${GATE[0]}"
for node in a b c d; do
    q -f "$WORK/claim-$node.sql" | cut -d'|' -f1 >"$WORK/claimed-$node" 2>"$WORK/claim-$node.err" &
done
for ((k = 0; k < 100; k++)); do
    [ "$(q -c "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")" = 4 ] && break
    sleep 0.05
done
echo "SELECT pg_advisory_unlock(4242) \\g /dev/null" >&"${GATE[1]}"
gate_in=${GATE[1]}
exec {gate_in}>&-
wait
cat "$WORK"/claimed-? | grep . >"$WORK/claimed"
total=$(wc -l <"$WORK/claimed")
unique=$(sort -u "$WORK/claimed" | wc -l)
per=$(for node in a b c d; do printf '%s=%s ' "node-$node" "$(grep -c . "$WORK/claimed-$node")"; done)
running=$(q -c "SELECT count(*) FROM jobs WHERE status = 'running'")
errors=$(cat "$WORK"/claim-?.err)
if [ "$total" = "$JOBS" ] && [ "$unique" = "$JOBS" ] && [ "$running" = "$JOBS" ] && [ -z "$errors" ]; then
    ok "S_JOB_CLAIM: 4 sessions x $PER claims on $JOBS queued jobs: $total claimed, $unique distinct, $running running ($per)"
else
    bad "S_JOB_CLAIM: $total claimed, $unique distinct, $running running ($per) $errors"
fi
mism=$(for node in a b c d; do
    while read -r id; do echo "$id node-$node"; done <"$WORK/claimed-$node"
done | sort >"$WORK/expected-nodes"
q -c "SELECT id || ' ' || node FROM jobs ORDER BY 1" | diff - "$WORK/expected-nodes" | grep -c '^[<>]')
[ "$mism" = 0 ] && ok "S_JOB_CLAIM: each job's node is the session that got it" ||
    bad "S_JOB_CLAIM: $mism jobs with another node than the session that got them"
# A lease run out: another node takes the job over, once.
over=$(q -c "PREPARE claim AS $claim_sql" \
    -c "EXECUTE claim('2026-12-03T10:20:00.000000', 'node-e', '2026-12-03T10:30:00.000000')" |
    cut -d'|' -f1)
[ "$over" = job001 ] && ok "S_JOB_CLAIM: the oldest job whose lease ran out is taken over ($over)" ||
    bad "S_JOB_CLAIM: lease takeover gave '$over'"

# ---- lists of terms probe the index ----
# A JSON list in "IN (SELECT json...)" is guessed at 100 rows: the planner
# hashed it and read every term of the table (0.45 ms a search at 2,047
# terms). The statements that take a list of terms must probe
# search_terms' key instead, also in their generic plan (after 5 runs).
q -c "INSERT INTO search_terms(space, term, df) SELECT 'plan', 'w' || g, 1 + g % 7 FROM generate_series(1, 3000) g" \
    -c "ANALYZE search_terms"
for st in S_SX_STATS_GET S_SX_DF_PRUNE; do
    arg="'[\"w1\",\"w2\",\"w3\"]'"
    [ "$st" = S_SX_DF_PRUNE ] && arg="'{\"w1\":1,\"w2\":-1}'"
    cmds=(-c "PREPARE p AS $(cat "$OUT/pg/$(idx "$st").sql")")
    for _ in 1 2 3 4 5 6 7; do cmds+=(-c "EXPLAIN EXECUTE p('plan', $arg)"); done
    plans=$(q "${cmds[@]}" 2>&1)
    if grep -q "Seq Scan on search_terms" <<<"$plans"; then
        bad "$st: a list of terms reads the whole of search_terms: $(grep -m1 "Seq Scan on search_terms" <<<"$plans")"
    elif grep -q "search_terms_pkey" <<<"$plans"; then
        ok "$st: a list of terms probes search_terms' key (3,000 terms, 7 runs)"
    else
        bad "$st: no plan read: $(head -3 <<<"$plans")"
    fi
done

if [ "$fails" = 0 ]; then
    echo "PASS tests/pg/sql_check.sh"
    exit 0
fi
echo "FAILED tests/pg/sql_check.sh: $fails"
exit 1
