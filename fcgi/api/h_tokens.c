/* h_tokens: the tokens of the caller's space for its admins (GET and POST
 * /api/tokens, DELETE /api/tokens/{id}) and the spaces a caller may use
 * (GET /api/spaces), over HTTP (service/tokens.c). */
#include "api/handlers.h"
#include "service/tokens.h"

void h_tokens_list(struct request *req, struct response *res)
{
    http_call(req, res, svc_token_list);
}

void h_tokens_create(struct request *req, struct response *res)
{
    http_call_body(req, res, svc_token_create);
}

void h_tokens_revoke(struct request *req, struct response *res)
{
    http_call_id(req, res, svc_token_revoke);
}

void h_spaces_list(struct request *req, struct response *res)
{
    http_call(req, res, svc_space_list);
}
