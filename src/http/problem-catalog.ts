// Every problem `code` the service can answer, documented once: GET /problems/{code} serves these entries, problem()
// (src/http/problem.ts) takes each code's status from here, and test/e2e/problem-catalog.test.ts fails when the code base
// emits a code that has no entry here. Types and constants only: the deal workflow's bundle may import it.

export interface ProblemType {
  title: string;
  /** The HTTP statuses this code comes with: the first unless the call site picks another (problem()'s `status`). */
  readonly statuses: readonly [number, ...number[]];
  meaning: string;
  action: string;
}

const RETRY_LATER = 'Retry after the Retry-After header’s seconds (or a few seconds); the request is safe to repeat.';

const CATALOG = {
  // Any endpoint
  bad_request: {
    title: 'Bad request',
    statuses: [400],
    meaning: 'The request could not be read as sent, for example its body does not match its Content-Length.',
    action: 'Check the request’s headers and body against the API documentation (/docs) and send it again.',
  },
  validation_failed: {
    title: 'The request is invalid',
    statuses: [400],
    meaning:
      'A field of the body, the query or the path is missing or has a wrong value, or the body nests arrays and objects ' +
      'deeper than 32 levels. The `errors` member lists each invalid field as {path, message}: the first 20 of them, ' +
      'and for nesting the path to the first array or object too deep.',
    action:
      'Correct the fields named in `errors` (the OpenAPI document at /docs shows every schema) and send it again.',
  },
  invalid_json: {
    title: 'The body is not valid JSON',
    statuses: [400],
    meaning: 'The body was sent as JSON but does not parse.',
    action: 'Send well-formed JSON (UTF-8) with Content-Type: application/json.',
  },
  request_aborted: {
    title: 'The request was cut short',
    statuses: [400],
    meaning: 'The client closed the connection before the whole body arrived.',
    action: 'Send the request again and keep the connection open until the answer arrives.',
  },
  unauthorized: {
    title: 'Missing or wrong credentials',
    statuses: [401],
    meaning:
      'The request carries no credential, or one that is not valid (an unknown, revoked or expired key or token, or a ' +
      'wrong password). The WWW-Authenticate header names the expected scheme where it is a bearer token.',
    action: 'Send the credential this endpoint expects (see `detail` and /docs); sign in again if a token has expired.',
  },
  forbidden: {
    title: 'Not allowed here',
    statuses: [403],
    meaning:
      'The credential is valid but may not act on this resource, for example a widget token used on another deal, or ' +
      'an administrator whose role (arbiter, support) does not cover this change.',
    action:
      'Use a credential issued for this resource (a widget token comes with each widget deal creation), or ask an administrator with the admin role.',
  },
  idempotency_key_in_use: {
    title: 'The same request is still running',
    statuses: [409],
    meaning:
      'Another request with this Idempotency-Key is being processed right now, so this one was not run: its answer ' +
      'will be the answer to both.',
    action: 'Wait the Retry-After header’s seconds and send the same request with the same key again.',
  },
  idempotency_key_reused: {
    title: 'The key was used for another request',
    statuses: [409],
    meaning:
      'This Idempotency-Key was used within the last 24 hours for a request with another body, method or path; a key ' +
      'stands for one request only, so this one was not run.',
    action: 'Send a new, unique key (a UUID) with each new request; repeat a key only to retry the very same request.',
  },
  // Administration
  administrator_exists: {
    title: 'Already an administrator',
    statuses: [409],
    meaning: 'The e-mail belongs to an administrator already.',
    action: 'Change their role with PATCH /admin/administrators/{id}, or send them a new setup link from the console.',
  },
  webhook_not_registered: {
    title: 'No webhook yet',
    statuses: [409],
    meaning:
      'The marketplace has not registered a webhook, so there is no secret to rotate and nowhere to send a test event.',
    action: 'The marketplace registers one with POST /api/mkt/webhook {url} (its secret key); then try again.',
  },
  last_admin: {
    title: 'The last administrator',
    statuses: [409],
    meaning: 'The change would leave no enabled administrator with the admin role, and nobody could then make another.',
    action: 'Make another administrator with the admin role first (POST /admin/administrators), then change this one.',
  },
  not_found: {
    title: 'No such resource',
    statuses: [404],
    meaning:
      'The path or the resource does not exist, or it belongs to another marketplace or account (the service never ' +
      'tells which).',
    action: 'Check the identifier and the credential you use; list the resources you own to find the right one.',
  },
  method_not_allowed: {
    title: 'Method not allowed',
    statuses: [405],
    meaning: 'The path exists but does not take this HTTP method. The Allow header lists the methods it takes.',
    action: 'Use one of the methods in the Allow header.',
  },
  payload_too_large: {
    title: 'The body is too large',
    statuses: [413],
    meaning:
      'The body is larger than this endpoint accepts: 64 KiB for JSON, a form or an MCP message unless the operation says ' +
      'more (its request body’s x-body-limit-bytes in the OpenAPI document), 25 MiB for a deal document.',
    action: 'Send a smaller body.',
  },
  unsupported_media_type: {
    title: 'Unsupported content type',
    statuses: [415],
    meaning: 'The body has a Content-Type this endpoint does not read.',
    action: 'Send JSON with Content-Type: application/json (forms: application/x-www-form-urlencoded).',
  },
  internal_error: {
    title: 'Internal error',
    statuses: [500],
    meaning: 'Something failed on the service’s side. The answer carries no internals; the server log has the details.',
    action: 'Retry later; if it persists, contact support and quote the X-Request-Id header of the answer.',
  },
  database_unavailable: {
    title: 'The database is unavailable',
    statuses: [503],
    meaning:
      'PostgreSQL does not answer right now (it is restarting, or out of connections); nothing was changed that the answer would confirm.',
    action: RETRY_LATER,
  },
  not_ready: {
    title: 'Not ready',
    statuses: [503],
    meaning: 'GET /healthz: the server runs, but PostgreSQL or Temporal does not answer yet.',
    action: 'Wait and ask again; a load balancer should route no traffic here until it answers 200.',
  },

  // Marketplace deals and escrow
  no_documents: {
    title: 'The deal has no documents',
    statuses: [400],
    meaning: 'An approval was requested for a deal that has no document yet.',
    action: 'Upload a document (POST /api/mkt/deals/{id}/documents), then start the approval.',
  },
  empty_document: {
    title: 'The document is empty',
    statuses: [400],
    meaning: 'A document upload had an empty body.',
    action: 'Send the file itself as the request body, with its Content-Type.',
  },
  approval_not_allowed: {
    title: 'An approval cannot start now',
    statuses: [400],
    meaning:
      'An approval starts only while the deal has documents and is not yet approved (or was rejected); later it cannot.',
    action: 'Read the deal (GET /api/mkt/deals?external_id=…) and act on its current status.',
  },
  approval_not_pending: {
    title: 'The approval is already decided',
    statuses: [400],
    meaning: 'The approval was already approved or rejected; a decision is taken once.',
    action: 'Reload the deal to see the decision. After a rejection the marketplace may start a new approval.',
  },
  deal_not_approved: {
    title: 'The deal is not approved',
    statuses: [400],
    meaning: 'Escrow starts only for a deal whose status is `approved`.',
    action: 'Wait for the buyer to approve (the deal.approved webhook tells you), then start escrow.',
  },
  amount_exceeds_deal: {
    title: 'The amount is more than the deal amount',
    statuses: [400],
    meaning: 'An escrow amount larger than the deal’s amount was asked for.',
    action: 'Send an amount up to the deal amount, or 0 (or none) for the full amount.',
  },
  invalid_payment_state: {
    title: 'The payment cannot move that way',
    statuses: [400],
    meaning:
      'The payment’s current status does not allow this move (allowed: pending → hold or refunded; hold → released, ' +
      'refunded or disputed; disputed → released or refunded by the arbiter).',
    action: 'Reload the deal and choose a move its latest payment allows.',
  },
  deal_closed: {
    title: 'The deal is closed',
    statuses: [400],
    meaning: 'The deal is paid, refunded or cancelled and takes no more changes.',
    action: 'Create a new deal for new business.',
  },
  approval_pending: {
    title: 'An approval is pending',
    statuses: [400],
    meaning: 'The buyer is deciding on the documents as they are: they cannot change until the approval is decided.',
    action:
      'Wait for the decision (deal.approved or deal.rejected); after a rejection, add documents and start a new approval.',
  },
  deal_not_cancellable: {
    title: 'The deal can no longer be cancelled',
    statuses: [400],
    meaning: 'The money is held or has moved: a deal is cancelled only before that.',
    action: 'Refund held money instead (the buyer, or an administrator), or open a dispute.',
  },
  no_open_dispute: {
    title: 'The deal has no open dispute',
    statuses: [400],
    meaning: 'Messages go to an open dispute; this deal has none, or its dispute is decided.',
    action: 'Reload the deal; a dispute is opened by the buyer while the money is held.',
  },
  currency_not_supported: {
    title: 'The acquirer does not take this currency',
    statuses: [400],
    meaning:
      'The deal’s currency is not one the marketplace’s acquirer takes: a live marketplace pays through YooKassa, in ' +
      'roubles (RUB). It happens to a deal made while the marketplace was in sandbox mode, which takes any ISO 4217 code.',
    action:
      'Make a new deal in RUB for the live marketplace (a live marketplace refuses other currencies at creation).',
  },
  invalid_delivery_state: {
    title: 'Shipment or delivery cannot be marked now',
    statuses: [400],
    meaning:
      'Shipment and delivery are marked while the money is held, once each: the order is already shipped (or delivered), or no money is held.',
    action: 'Read the deal (its `delivery` and `payments`) and mark the next step only.',
  },
  shipped_dispute_instead: {
    title: 'Shipped: dispute instead of refunding',
    statuses: [400],
    meaning:
      'The order is shipped, so the buyer can no longer take the money back alone; only a dispute stops the release.',
    action: 'Open a dispute (POST /cabinet/deals/{id}/escrow/dispute with a reason); the arbiter decides.',
  },
  invalid_refund_amount: {
    title: 'The amount cannot be refunded',
    statuses: [400],
    meaning:
      'A partial refund is more than 0 and leaves the seller more than nothing (less than the held money less the fee); a split ' +
      'decision’s release_amount and refund_amount add up to the held money and the release covers the fee.',
    action: 'Send amounts within the limits `detail` names, or refund the whole payment.',
  },
  payout_destination_invalid: {
    title: 'The payout destination is not accepted',
    statuses: [400],
    meaning:
      'The destination cannot receive payouts of this service: a sandbox pays out only to its test cards, a live one to a card synonym from YooKassa’s payout widget or a YooMoney wallet.',
    action:
      'In sandbox mode use 4111111111111111 (succeeds) or 4000000000000002 (declined); live, the token of the payout widget.',
  },
  dispute_open: {
    title: 'The payment is disputed',
    statuses: [400],
    meaning:
      'A dispute is open on the deal’s payment: only the arbiter’s decision releases or refunds it now. A plain release or ' +
      'refund (buyer or administrator), a cancellation or another dispute is refused, even when it was asked before the ' +
      'dispute opened: the deal checks the rule when it applies the move, not when the request was read.',
    action:
      'Wait for the arbiter’s decision (the deal.paid or deal.refunded event), or add to the dispute’s thread. An ' +
      'administrator decides it with POST /admin/deals/{id}/escrow/resolve {outcome, reason}.',
  },
  reason_required: {
    title: 'A reason is required',
    statuses: [400],
    meaning: 'Opening a dispute and deciding one are explained in words: the other side and the arbiter read them.',
    action: 'Send the move again with a non-empty `reason`.',
  },
  too_many_invitations: {
    title: 'The invitation was sent too often',
    statuses: [429],
    meaning: 'A deal’s invitation is sent again a few times an hour at most, so that nobody is flooded with mail.',
    action: 'Wait for the seconds in Retry-After; meanwhile the buyer can use the link already sent.',
  },
  invalid_record: {
    title: 'The change cannot be stored',
    statuses: [400],
    meaning:
      'A value of the change cannot be stored in the deal’s records (such as a NUL character or a value too large). ' +
      'Nothing was changed: the deal is exactly as before and takes the next change at once.',
    action: 'Send the change again without control characters or overlong values in its text.',
  },
  deal_conflict: {
    title: 'The external_id names a different deal',
    statuses: [409],
    meaning:
      'A deal creation (marketplace API or widget) repeated an external_id whose deal has other values of some of the ' +
      'fields the request gave; the `fields` member names them. Fields a repeat leaves out are not compared.',
    action:
      'Repeat the creation with the stored values (GET /api/mkt/deals?external_id=…), or use a new external_id for a new deal.',
  },
  acquirer_refused: {
    title: 'The payment provider refused',
    statuses: [502],
    meaning: 'The acquirer answered the payment operation with a refusal; `detail` gives its reason.',
    action:
      'Fix what the reason names (amount, account settings) before repeating; the same request will be refused again.',
  },
  acquirer_unavailable: {
    title: 'The payment provider did not answer',
    statuses: [503],
    meaning: 'The acquirer could not be reached; nothing was changed.',
    action: RETRY_LATER,
  },
  acquirer_not_configured: {
    title: 'Live escrow is not configured',
    statuses: [503],
    meaning: 'The service has no acquirer account for live marketplaces (YOOKASSA_SHOP_ID and YOOKASSA_SECRET_KEY).',
    action: 'Ask the operator to configure the acquirer; sandbox marketplaces work without it.',
  },
  deal_engine_unavailable: {
    title: 'The deal engine is busy',
    statuses: [503],
    meaning: 'The deal’s workflow did not answer in time, so the change could not be confirmed.',
    action: RETRY_LATER,
  },
  temporarily_unavailable: {
    title: 'Temporarily unavailable',
    statuses: [503],
    meaning:
      'An acquirer notification could not be processed now (the payment could not be re-read or the deal reached).',
    action: 'The acquirer resends its notification; nothing else is needed. Senders of your own: retry later.',
  },

  // Webhooks
  webhook_url_not_allowed: {
    title: 'The webhook URL is not public',
    statuses: [400],
    meaning:
      'The webhook URL resolves to a private, loopback, link-local, NAT64 or other special-use address (for every ' +
      'marketplace, sandbox included). Loopback receivers are allowed only where the service runs with ' +
      'WEBHOOK_ALLOW_LOOPBACK=true, as `npm start` does on a developer’s machine.',
    action: 'Register a publicly reachable URL (https for live marketplaces).',
  },
  invalid_cursor: {
    title: 'The list cursor is not valid here',
    statuses: [400],
    meaning:
      'A list’s `starting_after` or `ending_before` names no item of that list (an unknown id, or one of another ' +
      'marketplace), or both were given: a page is taken either after an item or before it. For tenders: `cursor` is ' +
      'not a next_cursor this API gave.',
    action:
      'Take the cursor from an item of a page you listed with the same key (`event_id` in GET /api/mkt/events, ' +
      '`next_cursor` in GET /v1/tenders), and send only one of the two.',
  },
  temporal_unavailable: {
    title: 'The workflow engine is unavailable',
    statuses: [503],
    meaning:
      'Temporal could not be reached (it is restarting, say): a deal could not be created or changed, or an administrator’s webhook replay could not be handed to it. Repeating the request is safe: a repeated creation finishes what this one began.',
    action: RETRY_LATER,
  },

  // Widget
  origin_not_allowed: {
    title: 'This origin may not use the widget',
    statuses: [403],
    meaning: 'The page’s origin is not among the live marketplace’s allowed_origins.',
    action: 'An administrator adds the storefront origin (PATCH /admin/marketplaces/{id} with allowed_origins).',
  },
  widget_token_expired: {
    title: 'The widget token has expired',
    statuses: [401],
    meaning: 'Widget tokens are short-lived (WIDGET_TOKEN_TTL_SECONDS).',
    action: 'Repeat the widget deal creation with the same external_id and buyer for a fresh token.',
  },
  rate_limited: {
    title: 'Too many widget deal creations',
    statuses: [429],
    meaning:
      'Widget deal creations are limited per public key and per client address in a fixed window; widget lookups (a page ' +
      'load finding its order’s deal) per client address, in windows of their own.',
    action: 'Wait the Retry-After header’s seconds, then try again.',
  },

  // Cabinet and sign-in
  too_many_attempts: {
    title: 'Too many wrong passwords',
    statuses: [429],
    meaning:
      'Wrong passwords are limited in a window per account and client address, per client address, and by a high ' +
      'ceiling per account, against password guessing; the owner signing in from another address is not held up by ' +
      'a stranger’s attempts.',
    action: 'Wait the Retry-After header’s seconds, then sign in with the right password.',
  },
  invalid_invitation: {
    title: 'The invitation is not valid',
    statuses: [400],
    meaning: 'The invitation link is unknown, already used or expired.',
    action: 'Sign in if you already set a password, or ask for a new invitation.',
  },
  invalid_token: {
    title: 'The link is not valid',
    statuses: [400],
    meaning:
      'A sign-up confirmation or password reset link is unknown, forged, already used or expired (a reset link lasts ' +
      'an hour, a sign-up confirmation 24 hours), or the account got a password another way meanwhile.',
    action: 'Ask for a new link (sign up again, or “Forgot your password?”), or sign in if you know your password.',
  },
  wrong_password: {
    title: 'The current password is wrong',
    statuses: [400],
    meaning: 'Changing the password needs the current one; wrong ones count against the same limits as signing in.',
    action: 'Type the current password again, or sign out and use “Forgot your password?”.',
  },
  second_factor_required: {
    title: 'A second factor is needed',
    statuses: [401, 403],
    meaning:
      'The account has a second factor (an authenticator app or a passkey), so signing in with the password alone is ' +
      'not enough (401 at POST /cabinet/login); or a money move in the cabinet needs a session that signed in with a ' +
      'second factor, because the marketplace or the operator requires one (403).',
    action:
      'Send `code` (the app’s 6 digits, or a recovery code) with the password; for a money move, sign in again with ' +
      'the second factor (or confirm it on the cabinet’s page) and repeat the move.',
  },
  wrong_second_factor: {
    title: 'The second factor is wrong',
    statuses: [401, 400],
    meaning:
      'The code is not the app’s current one, was already used, or is not an unused recovery code of the account. ' +
      'Wrong codes count against the same limits as wrong passwords.',
    action: 'Type the code the app shows now (a new one comes every 30 seconds), or an unused recovery code.',
  },
  recent_sign_in_required: {
    title: 'Sign in again first',
    statuses: [403],
    meaning:
      'Removing a second factor, listing passkeys and making new recovery codes need a sign-in (or a second factor ' +
      'given) in the last 15 minutes.',
    action: 'Sign in again (or confirm your second factor on the security page) and repeat the request.',
  },
  invalid_passkey_response: {
    title: 'The passkey’s answer is not valid',
    statuses: [400],
    meaning:
      'The WebAuthn response answers no live challenge of this service (unknown, expired or already used), or its ' +
      'signature, origin or user verification does not check out, or the passkey is not one of this account’s.',
    action: 'Ask for new options (POST …/options) and let the browser answer them once.',
  },
  totp_already_enabled: {
    title: 'An authenticator app is already set up',
    statuses: [409],
    meaning: 'The account has a confirmed authenticator app; a new secret would replace it unnoticed.',
    action: 'Remove the app first (DELETE /cabinet/mfa/totp), then set it up again.',
  },
  csrf_failed: {
    title: 'The form token is wrong',
    statuses: [403],
    meaning: 'A form was sent without its form token or with a stale one, for example from an old tab.',
    action: 'Reload the page and send the form again.',
  },

  // Single sign-on
  unknown_client: {
    title: 'Unknown SSO client',
    statuses: [400],
    meaning: 'The authorize request has no client_id, a repeated one, or one that is not registered.',
    action: 'Use the client_id an administrator registered (POST /admin/sso/clients).',
  },
  redirect_uri_not_allowed: {
    title: 'The redirect_uri is not registered',
    statuses: [400],
    meaning:
      'The authorize request’s redirect_uri is missing, repeated, or not one the client registered. The service never redirects to it.',
    action: 'Send one of the client’s registered redirect URIs exactly (wildcards match subdomains only).',
  },
  state_required: {
    title: 'state is required',
    statuses: [400],
    meaning: 'The authorize request has no state, a repeated one, or one that is too long.',
    action: 'Send one random state value per sign-in and compare it when the browser comes back.',
  },
  client_id_taken: {
    title: 'The client_id is taken',
    statuses: [409],
    meaning: 'An SSO client with this client_id is already registered.',
    action: 'Choose another client_id, or read the existing client (GET /admin/sso/clients/{client_id}).',
  },
  sso_client_of_marketplace: {
    title: 'The marketplace owns this SSO client',
    statuses: [409],
    meaning:
      'The SSO client was made with a marketplace (its sso_redirect_uri); its name and redirect URI follow the marketplace, and it cannot be deleted on its own.',
    action:
      'Change sso_redirect_uri with PATCH /admin/marketplaces/{id}, or deactivate the marketplace; to stop the client alone, PATCH it with {"disabled": true}.',
  },
  invalid_client: {
    title: 'Wrong client credentials',
    statuses: [401],
    meaning: 'The client_id and client_secret do not match a registered SSO client (OAuth error invalid_client).',
    action: 'Send the client’s current secret (rotated secrets stop working at once), by HTTP Basic or in the form.',
  },
  invalid_code: {
    title: 'The authorization code is not valid',
    statuses: [400],
    meaning: 'The code is unknown or was issued to another client (OAuth error invalid_grant).',
    action: 'Start a new sign-in and exchange the code it returns.',
  },
  code_already_used: {
    title: 'The authorization code is already used',
    statuses: [400],
    meaning:
      'A code is single-use. A second use also revokes the tokens the first exchange issued (OAuth error invalid_grant).',
    action: 'Exchange each code once; start a new sign-in to get a new one.',
  },
  code_expired: {
    title: 'The authorization code has expired',
    statuses: [400],
    meaning: 'Codes live SSO_CODE_TTL_SECONDS, 5 minutes by default (OAuth error invalid_grant).',
    action: 'Exchange the code as soon as the browser returns; start a new sign-in now.',
  },
  redirect_uri_mismatch: {
    title: 'The redirect_uri differs',
    statuses: [400],
    meaning:
      'The token exchange’s redirect_uri is not the one given at the authorize step (OAuth error invalid_grant).',
    action: 'Send exactly the redirect_uri of the authorize request.',
  },
  invalid_code_verifier: {
    title: 'The PKCE code_verifier does not fit',
    statuses: [400],
    meaning:
      'The code_verifier is missing although the authorize step had a code_challenge, was sent without a challenge, ' +
      'or does not match it (OAuth error invalid_grant).',
    action: 'Send the verifier whose S256 challenge went to the authorize step, and none when no challenge was sent.',
  },
  unsupported_grant_type: {
    title: 'Unsupported grant type',
    statuses: [400],
    meaning:
      'POST /sso/token takes grant_type=authorization_code only; /sso/oidc/token takes authorization_code and refresh_token.',
    action: 'Send grant_type=authorization_code (or refresh_token, at the OpenID Connect token endpoint).',
  },
  invalid_refresh_token: {
    title: 'The refresh token is not valid',
    statuses: [400],
    meaning:
      'The refresh token is unknown, issued to another client, expired or revoked (the site’s access was revoked, the ' +
      'password changed, the user signed out everywhere) (OAuth error invalid_grant).',
    action: 'Send the user through sign-in again; keep only the newest refresh token of each sign-in.',
  },
  refresh_token_reused: {
    title: 'The refresh token was already used',
    statuses: [400],
    meaning:
      'Each use of a refresh token spends it and answers the next one. A spent token used again may have been stolen: ' +
      'every refresh and access token issued from that sign-in is revoked (OAuth error invalid_grant).',
    action:
      'Store the new refresh token of every answer and use each one once; send the user through sign-in again now.',
  },
  invalid_scope: {
    title: 'The scope is wider than granted',
    statuses: [400],
    meaning: 'A refresh asked for scope values the sign-in did not grant (OAuth error invalid_scope).',
    action: 'Ask for the granted scope or part of it, or leave scope out to get all of it.',
  },
  invalid_target: {
    title: 'The resource is not one this server issues tokens for',
    statuses: [400],
    meaning:
      'The `resource` (RFC 8707) of an authorization or token request names no resource of this service, or differs ' +
      'from the one the sign-in was for; tokens are issued only for the data server (`{mcp_url}` or `{mcp_url}/mcp/`) ' +
      '(OAuth error invalid_target).',
    action: 'Leave resource out, or name the data server as its protected-resource metadata gives it.',
  },
  grant_type_not_allowed: {
    title: 'The client did not register this grant type',
    statuses: [400],
    meaning: 'The client’s registration (`grant_types`) does not include this grant (OAuth error unauthorized_client).',
    action: 'Register the client again with the grant type in grant_types.',
  },
  invalid_redirect_uri: {
    title: 'A redirect URI cannot be registered',
    statuses: [400],
    meaning:
      'Dynamic client registration (RFC 7591): a redirect URI is not an exact https URI (plain http only on a loopback ' +
      'address), or breaks another redirect URI rule (OAuth error invalid_redirect_uri).',
    action: 'Register exact https URIs, or http://127.0.0.1:<port>/… for an application on the user’s machine.',
  },
  invalid_client_metadata: {
    title: 'The client metadata cannot be registered',
    statuses: [400],
    meaning:
      'Dynamic client registration (RFC 7591): a metadata value is invalid or not supported; only public clients ' +
      '(token_endpoint_auth_method `none`, PKCE) with grant types authorization_code and refresh_token register ' +
      'themselves (OAuth error invalid_client_metadata).',
    action: 'Fix the field the description names; a confidential client is registered by an operator.',
  },
  too_many_registrations: {
    title: 'Too many client registrations',
    statuses: [429],
    meaning:
      'Client registrations are limited per client address in a fixed window (SSO_REGISTRATION_LIMIT_PER_ADDRESS).',
    action: 'Wait the Retry-After header’s seconds; register a client once and keep its client_id.',
  },

  // Data API
  unknown_corpus: {
    title: 'Unknown corpus',
    statuses: [400],
    meaning: 'corpus_keys names a corpus the service does not have.',
    action: 'Use keys from GET /v1/corpora.',
  },
  search_timeout: {
    title: 'The search took too long',
    statuses: [503],
    meaning:
      'A full-text search was stopped because it had to read most tenders, as a quoted phrase or a negation of very ' +
      'common words does.',
    action: 'Remove the quotes, add a rarer word or a country filter, and search again.',
  },
  conflicting_parameters: {
    title: 'The parameters contradict one another',
    statuses: [400],
    meaning:
      'Each parameter has a valid shape, but together they ask for something impossible: sort=relevance without text, ' +
      'value_min above value_max, a cursor with an offset, or a cursor made for another sort. The request is not counted.',
    action: 'Drop or change one of the parameters `detail` names, and send the request again.',
  },
  quota_exceeded: {
    title: 'The monthly quota is used up',
    statuses: [429],
    meaning:
      'The data API key’s account has spent its requests for this calendar month (UTC). RateLimit headers show the usage.',
    action: 'Wait until the quota renews (Retry-After, and resets_at in GET /v1/me), or move to a higher tariff.',
  },
  too_many_data_keys: {
    title: 'Too many active data API keys',
    statuses: [409],
    meaning:
      'An account holds at most 20 active data API keys at a time; this one has that many already. Nothing was issued.',
    action:
      'Revoke a key you no longer use (POST /cabinet/data-keys/{id}/revoke, or the cabinet’s data keys page), then issue the new one.',
  },
} as const satisfies Record<string, ProblemType>;

/** Every code the service answers: problem() takes only these, so a code without an entry does not compile. */
export type ProblemCode = keyof typeof CATALOG;

/** The statuses the catalog lists for a code (for every code when C is the union). */
export type ProblemStatus<C extends ProblemCode = ProblemCode> = (typeof CATALOG)[C]['statuses'][number];

/** The status a code answers with unless its call site picks another of its statuses. */
export function problemStatus<C extends ProblemCode>(code: C): ProblemStatus<C> {
  return CATALOG[code].statuses[0];
}

/** Whether a string (a workflow failure's type, a page's path) is a code; inherited names such as `constructor` are not. */
export function isProblemCode(code: string): code is ProblemCode {
  return Object.hasOwn(CATALOG, code);
}

/** The entry for a code, or undefined. */
export function problemType(code: string): ProblemType | undefined {
  return isProblemCode(code) ? CATALOG[code] : undefined;
}

export function problemCodes(): string[] {
  return Object.keys(CATALOG);
}
