"""Schemathesis hooks for `npm run test:fuzz`, loaded through SCHEMATHESIS_HOOKS (test/fuzz/run.ts sets it)."""
import schemathesis

# Codes that mean "the request does not have the documented shape". Other 400s are rules about the state of a resource
# (CONTRACT.md: deal_not_approved, no_documents, invalid_payment_state, ...), which a schema cannot express.
SHAPE_CODES = {"validation_failed", "invalid_json", "bad_request"}


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
    if code in SHAPE_CODES:
        raise AssertionError(f"A request that follows the OpenAPI document was refused as {code}: {body.get('detail')}")
    return None
