"""Schemathesis hooks for `npm run test:fuzz`, loaded through SCHEMATHESIS_HOOKS (test/fuzz/run.ts sets it)."""
import os

import schemathesis

# Codes that mean "the request does not have the documented shape". Other 400s are rules about the state of a resource
# (CONTRACT.md: deal_not_approved, no_documents, invalid_payment_state, ...), which a schema cannot express.
SHAPE_CODES = {"validation_failed", "invalid_json", "bad_request"}
# The words of src/http/text.ts for a refused character.
TEXT_RULE = "must not contain control characters"
SURROGATE = "lone surrogate"
# Rules between two fields of one request, which JSON Schema cannot say and the document says in words: a deal's `fee`
# is less than its `amount` (CONTRACT.md "Money"). A refusal naming only such a rule is not one of the document's shape.
CROSS_FIELD_RULES = {("fee", "must be less than the amount (0 ≤ fee < amount)")}


@schemathesis.check
def documented_shape_is_accepted(ctx, response, case):
    """A request the OpenAPI document allows is never refused for its shape: the document says what the server enforces."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or response.status_code != 400:
        return None
    try:
        body = response.json()
    except Exception:
        return None
    code = body.get("code") if isinstance(body, dict) else None
    # The text rule's refusals name a control character or a lone surrogate the request really held, which the
    # documents forbid on every string: such a request was mislabelled as positive (Schemathesis fills some values,
    # such as path segments, from pools of earlier responses), not refused against the document.
    errors = body.get("errors") or [] if isinstance(body, dict) else []
    if errors and all(TEXT_RULE in str(error.get("message", "")) or SURROGATE in str(error.get("message", "")) for error in errors):
        return None
    if errors and all((error.get("path"), error.get("message")) in CROSS_FIELD_RULES for error in errors):
        return None
    if code in SHAPE_CODES:
        raise AssertionError(f"A request that follows the OpenAPI document was refused as {code}: {body.get('detail')}")
    return None


# The demo marketplace whose secret key the run sends (test/fuzz/run.ts): switching it off or replacing its keys would
# leave every marketplace operation after that answering 401, untested; switching it to live mode would leave its deal
# and escrow operations answering what a live marketplace without an acquirer answers (503, webhooks only to https),
# untested in sandbox. Other marketplaces (made by the run) still meet these operations.
PROTECTED_MARKETPLACE = os.environ.get("FUZZ_MARKETPLACE_ID", "")
KEY_ENDING = ("/deactivate", "/rotate-secret-key", "/rotate-public-key")


@schemathesis.hook
def filter_case(ctx, case):
    path = case.operation.path
    if not path.startswith("/admin/marketplaces/{id}") or (case.path_parameters or {}).get("id") != PROTECTED_MARKETPLACE:
        return True
    if path.endswith(KEY_ENDING):
        return False
    body = case.body if isinstance(case.body, dict) else {}
    return not (path == "/admin/marketplaces/{id}" and case.method.upper() == "PATCH" and body.get("mode", "sandbox") != "sandbox")
