/* h_evidence: a space's evidence ageing over HTTP (service/evidence.c): GET
 * and PUT /api/evidence/policy. */
#include "api/handlers.h"
#include "service/ctx.h"
#include "service/evidence.h"

void h_evidence_policy_get(struct request *req, struct response *res)
{
    http_call(req, res, svc_evidence_policy_get);
}

void h_evidence_policy_set(struct request *req, struct response *res)
{
    http_call_body(req, res, svc_evidence_policy_set);
}
