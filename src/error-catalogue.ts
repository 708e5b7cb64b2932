/**
 * Every error code Hearth answers, in one table: its HTTP status, the message
 * sent when the caller gives none, and the areas that answer it. Errors are
 * made from it with `fail(code, message?, {status?, details?, hint?})`
 * (src/errors.ts), so an unknown code, or a status the entry does not list, is
 * a compile error. docs/errors.md lists the same codes with the same statuses
 * (test/errors/catalogue.test.ts).
 *
 * One code, one status. A second status is kept only where GoTrue, PostgREST
 * or Supabase Storage answer the same code with it, or on a Hearth-only route
 * (one the upstream lacks), and `otherStatuses` says where. PGRST codes and the SQLSTATEs Hearth itself answers (42703, 42712,
 * 21000) are here; database errors relayed as they are keep their SQLSTATE
 * and PostgREST's status mapping (src/rest/errors.ts) and are not.
 */

/** Who answers a code: `http` is every area (credentials, body parsing, the database being away). */
export type ErrorArea =
  | 'http'
  | 'auth'
  | 'rest'
  | 'storage'
  | 'management'
  | 'functions'
  | 'realtime'
  | 'queues'
  | 'workflows'
  | 'cron'
  | 'start';

export interface CatalogueEntry {
  status: number;
  areas: readonly ErrorArea[];
  message: string;
  /** Further statuses this code is answered with, each with the reason (the upstream that answers so). */
  otherStatuses?: Readonly<Record<number, string>>;
}

export const CATALOGUE = {
  // http
  bad_authorization: {
    status: 401,
    areas: ['http'],
    message: 'The Authorization header must be "Bearer <key or access token>".',
  },
  bad_jwt: {
    status: 401,
    areas: ['http'],
    message: 'The access token is invalid or expired: sign in again, or refresh the session.',
  },
  database_unavailable: {
    status: 503,
    areas: ['http'],
    message: 'The database is not reachable right now (restarting, or busy with too many connections); retry shortly.',
  },
  headers_too_large: {
    status: 431,
    areas: ['http'],
    message: 'The request headers are larger than the server accepts (16 KiB in all).',
  },
  internal_error: { status: 500, areas: ['http'], message: 'Something went wrong on our side; the error is logged.' },
  unexpected_failure: {
    status: 500,
    areas: ['auth'],
    message: 'Database error saving new user (a trigger on auth.users refused the row; the reason is logged).',
  },
  invalid_api_key: { status: 401, areas: ['http'], message: 'Invalid API key: it is not a key of this project.' },
  invalid_request: {
    status: 400,
    areas: ['http', 'auth', 'storage', 'management', 'functions', 'realtime', 'queues', 'workflows'],
    message: 'The request is not valid: check its body and parameters against the docs.',
    otherStatuses: {
      414: 'Supabase Storage: Fastify refuses a path parameter over its length limit with 414, and Storage relays the status.',
    },
  },
  malformed_request: {
    status: 400,
    areas: ['http'],
    message: 'The request is not valid HTTP: check the request line and the header names and values.',
  },
  no_api_key: {
    status: 401,
    areas: ['http', 'storage', 'functions'],
    message: 'No API key found in the request: send the project key in the apikey header or as Authorization: Bearer.',
  },
  not_found: {
    status: 404,
    areas: ['http', 'auth', 'storage', 'management', 'queues', 'workflows', 'cron'],
    message: 'Not found.',
  },
  payload_too_large: {
    status: 413,
    areas: ['http', 'realtime'],
    message: 'The request body is larger than this route accepts.',
  },
  project_not_found: { status: 404, areas: ['http'], message: 'There is no project with this ref.' },
  request_timeout: { status: 408, areas: ['http'], message: 'The request did not arrive in time.' },
  unsupported_media_type: { status: 415, areas: ['http'], message: 'Unsupported Content-Type.' },

  // auth
  anonymous_provider_disabled: { status: 422, areas: ['auth'], message: 'Anonymous sign-ins are disabled' },
  bad_code_challenge: {
    status: 400,
    areas: ['auth'],
    message: 'code_challenge_method must be S256 (plain is not accepted).',
  },
  bad_code_verifier: {
    status: 400,
    areas: ['auth'],
    message: 'code_verifier does not match the code_challenge this flow started with.',
  },
  // 302: only ever a redirect, the code in error_code of its fragment or query (GoTrue's redirect errors).
  bad_oauth_state: {
    status: 302,
    areas: ['auth'],
    message: 'The sign-in flow is unknown, expired or already finished; start again.',
  },
  bad_redirect: {
    status: 400,
    areas: ['auth'],
    message: 'redirect_to is not on the redirect allowlist of this project.',
  },
  conflict: {
    status: 409,
    areas: ['auth'],
    message: 'The user is still referenced by a table (a foreign key without on delete cascade).',
  },
  email_exists: {
    status: 422,
    areas: ['auth'],
    message: 'A user with this email address has already been registered.',
  },
  email_not_confirmed: { status: 400, areas: ['auth'], message: 'Email not confirmed' },
  email_taken: { status: 409, areas: ['auth', 'management'], message: 'User already registered' },
  flow_state_expired: {
    status: 422,
    areas: ['auth'],
    message: 'This auth code has expired (they are valid 5 minutes); sign in again.',
  },
  flow_state_not_found: {
    status: 404,
    areas: ['auth'],
    message: 'This auth code is unknown or was already exchanged.',
  },
  identity_already_exists: {
    status: 422,
    areas: ['auth'],
    message:
      'This identity is already linked to another account; it is not moved. Sign in with it, or unlink it there first.',
  },
  identity_not_found: { status: 422, areas: ['auth'], message: 'No identity with this id is linked to your account.' },
  insufficient_aal: {
    status: 403,
    areas: ['auth'],
    message: 'AAL2 required: verify one of your factors first.',
    otherStatuses: {
      401: 'GoTrue: PUT /user changing the e-mail or password of an MFA user with an aal1 session.',
      422: 'GoTrue: unenrolling a verified factor with an aal1 session.',
    },
  },
  invalid_credentials: { status: 400, areas: ['auth'], message: 'Invalid login credentials' },
  invalid_current_password: {
    status: 401,
    areas: ['auth'],
    message: 'current_password is not the password of this account.',
  },
  invalid_grant: { status: 401, areas: ['auth'], message: 'Invalid Refresh Token: Refresh Token Not Found' },
  leaked_password: {
    status: 400,
    areas: ['auth'],
    message:
      'Password is known to be weak and easy to guess, please choose a different one (it appears in a known data breach).',
  },
  manual_linking_disabled: { status: 404, areas: ['auth'], message: 'Manual linking is disabled' },
  mfa_challenge_expired: {
    status: 422,
    areas: ['auth'],
    message: 'This challenge has expired or was already used; request a new one.',
  },
  mfa_challenge_not_found: {
    status: 404,
    areas: ['auth'],
    message: 'No such challenge; request new options with POST /webauthn/authenticate/options.',
  },
  mfa_factor_name_conflict: {
    status: 422,
    areas: ['auth'],
    message: 'You already have a factor with this friendly_name; choose another.',
  },
  mfa_factor_not_found: { status: 404, areas: ['auth'], message: 'No factor with this id is enrolled for this user.' },
  mfa_phone_enroll_not_enabled: {
    status: 422,
    areas: ['auth'],
    message: 'Phone factors are not supported: enrol a totp or webauthn factor.',
  },
  mfa_verification_failed: { status: 422, areas: ['auth'], message: 'Invalid TOTP code entered' },
  mfa_verification_rejected: {
    status: 422,
    areas: ['auth'],
    message: 'This TOTP code was already used; wait for the next code and request a new challenge.',
  },
  no_authorization: {
    status: 401,
    areas: ['auth'],
    message: "This endpoint requires a Bearer token: the user's access token.",
  },
  not_admin: { status: 403, areas: ['auth'], message: 'Updating app_metadata requires admin privileges.' },
  oauth_provider_error: { status: 302, areas: ['auth'], message: 'The sign-in provider refused the sign-in.' },
  otp_expired: { status: 403, areas: ['auth'], message: 'Token has expired or is invalid' },
  otp_locked: {
    status: 429,
    areas: ['auth'],
    message: 'Too many wrong codes: this code is locked; request a new one.',
  },
  over_email_send_rate_limit: {
    status: 429,
    areas: ['auth'],
    message: 'Too many e-mails sent to your address; try again later.',
  },
  over_request_rate_limit: {
    status: 429,
    areas: ['auth', 'management'],
    message: 'Too many requests of this kind from your address; try again later.',
  },
  phone_provider_disabled: {
    status: 400,
    areas: ['auth'],
    message: 'Phone sign-in is not supported: this project has no phone provider; use an e-mail address.',
    otherStatuses: { 422: 'GoTrue: a password grant (POST /token) with a phone number.' },
  },
  provider_disabled: { status: 400, areas: ['auth'], message: 'This sign-in provider is not enabled for the project.' },
  provider_unreachable: {
    status: 502,
    areas: ['auth'],
    message: 'The sign-in provider could not be reached; try again.',
  },
  reauthentication_not_valid: {
    status: 422,
    areas: ['auth'],
    message: 'Nonce has expired or is invalid; call GET /auth/v1/reauthenticate for a new one.',
  },
  reauthentication_required: {
    status: 400,
    areas: ['auth'],
    message:
      'Changing the password or e-mail needs current_password (or the nonce of GET /auth/v1/reauthenticate) in the same request.',
  },
  same_password: { status: 422, areas: ['auth'], message: 'New password should be different from the old password.' },
  saml_provider_disabled: {
    status: 404,
    areas: ['auth'],
    message: 'SAML 2.0 is disabled: single sign-on (signInWithSSO) is not supported.',
  },
  session_not_found: {
    status: 403,
    areas: ['auth'],
    message: 'The session of this access token has ended (signed out or revoked); sign in again.',
    otherStatuses: {
      404: 'Hearth-only route DELETE /auth/v1/sessions/{id}: an unknown or foreign session id, as an unknown factor id is mfa_factor_not_found 404.',
    },
  },
  single_identity_not_deletable: {
    status: 422,
    areas: ['auth'],
    message: 'This identity is your only way to sign in; set a password or link another identity before unlinking it.',
  },
  signup_disabled: { status: 422, areas: ['auth'], message: 'Signups not allowed for this instance' },
  smtp_failed: { status: 502, areas: ['auth'], message: 'The SMTP server could not be reached or refused the mail.' },
  smtp_not_configured: {
    status: 400,
    areas: ['auth'],
    message: 'No SMTP server is set: save smtp_host (and smtp_port, smtp_user, smtp_pass) in config/auth first.',
  },
  too_many_enrolled_mfa_factors: {
    status: 422,
    areas: ['auth'],
    message: 'Maximum number of factors reached; unenroll one to continue.',
  },
  unsupported_grant_type: {
    status: 400,
    areas: ['auth'],
    message: 'grant_type must be password, refresh_token or pkce (query parameter or body field).',
  },
  user_already_exists: { status: 422, areas: ['auth'], message: 'A user with this id already exists.' },
  user_banned: {
    status: 400,
    areas: ['auth'],
    message: 'User is banned.',
    otherStatuses: { 403: 'GoTrue: POST /verify (and every check of a signed-in user) for a banned user.' },
  },
  user_not_found: {
    status: 404,
    areas: ['auth'],
    message: 'User not found.',
    otherStatuses: { 403: 'GoTrue: an access token whose sub names a user that no longer exists.' },
  },
  validation_failed: {
    status: 400,
    areas: ['auth'],
    message: 'A field of the request is missing or malformed.',
    otherStatuses: { 404: 'GoTrue: a user_id, factor_id or identity_id in the path that is not a UUID.' },
  },
  weak_password: { status: 422, areas: ['auth'], message: 'Password should be at least 10 characters.' },
  web3_provider_disabled: {
    status: 400,
    areas: ['auth'],
    message: 'Web3 provider is disabled: signInWithWeb3 is not supported.',
  },
  webauthn_credential_exists: { status: 422, areas: ['auth'], message: 'This passkey is already registered.' },
  webauthn_not_configured: {
    status: 422,
    areas: ['auth'],
    message:
      'Passkeys are not configured for this project: set webauthn_rp_id and webauthn_rp_origins in config/auth (dashboard: Auth, Passkeys).',
  },

  // rest
  '21000': { status: 400, areas: ['rest'], message: 'UPDATE or DELETE requires a WHERE clause' },
  '42703': { status: 400, areas: ['rest'], message: 'A column of the request does not exist' },
  '42712': { status: 400, areas: ['rest'], message: 'A table name is specified more than once' },
  PGRST100: {
    status: 400,
    areas: ['rest'],
    message: 'Failed to parse a query parameter (select, a filter, order, on_conflict or columns).',
  },
  PGRST101: { status: 405, areas: ['rest'], message: 'For functions, only GET, HEAD and POST verbs are allowed' },
  PGRST102: { status: 400, areas: ['rest'], message: 'Empty or invalid json' },
  PGRST103: { status: 416, areas: ['rest'], message: 'Requested range not satisfiable' },
  PGRST105: {
    status: 405,
    areas: ['rest'],
    message: "Filters must include all and only primary key columns with 'eq' operators",
  },
  PGRST106: { status: 406, areas: ['rest'], message: 'The schema is not one this API exposes.' },
  PGRST107: {
    status: 406,
    areas: ['rest'],
    message: 'Query plans (Accept: application/vnd.pgrst.plan) are not enabled for this project',
  },
  PGRST108: {
    status: 400,
    areas: ['rest'],
    message: 'A filter or order names a resource that is not embedded in this request.',
  },
  PGRST114: {
    status: 400,
    areas: ['rest'],
    message: 'Range header and limit/offset query parameters are not allowed for PUT',
  },
  PGRST115: { status: 400, areas: ['rest'], message: 'Payload values do not match URL in primary key column(s)' },
  PGRST116: { status: 406, areas: ['rest'], message: 'Cannot coerce the result to a single JSON object' },
  PGRST117: { status: 405, areas: ['rest'], message: 'Unsupported HTTP method' },
  PGRST118: { status: 400, areas: ['rest'], message: 'A related order is not possible' },
  PGRST119: { status: 400, areas: ['rest'], message: 'This spread is not possible' },
  PGRST120: { status: 400, areas: ['rest'], message: 'Bad operator on an embedded resource' },
  PGRST121: { status: 500, areas: ['rest'], message: 'Could not parse JSON in the "RAISE SQLSTATE \'PGRST\'" error' },
  PGRST122: { status: 400, areas: ['rest'], message: 'Invalid preferences given with handling=strict' },
  PGRST124: { status: 400, areas: ['rest'], message: 'Query result exceeds max-affected preference constraint' },
  PGRST125: { status: 404, areas: ['rest'], message: 'Invalid path specified in request URL' },
  PGRST127: { status: 400, areas: ['rest'], message: 'The request uses a feature this REST API does not support' },
  PGRST128: {
    status: 400,
    areas: ['rest'],
    message: 'Function must return SETOF or TABLE when max-affected preference is used with handling=strict',
  },
  PGRST200: {
    status: 400,
    areas: ['rest'],
    message: 'Could not find a relationship between the tables in the schema cache',
  },
  PGRST201: { status: 400, areas: ['rest'], message: 'Could not embed because more than one relationship was found' },
  PGRST202: { status: 404, areas: ['rest'], message: 'Could not find the function in the schema cache' },
  PGRST203: { status: 300, areas: ['rest'], message: 'Could not choose the best candidate function between overloads' },
  PGRST204: { status: 400, areas: ['rest'], message: 'Could not find the column in the schema cache' },
  PGRST205: { status: 404, areas: ['rest'], message: 'Could not find the table in the schema cache' },
  PGRST301: { status: 401, areas: ['rest'], message: 'JWT expired' },

  // storage
  bucket_exists: { status: 409, areas: ['storage'], message: 'The resource already exists' },
  bucket_not_empty: {
    status: 409,
    areas: ['storage'],
    message: 'The bucket still holds objects: empty it first (POST /storage/v1/bucket/{id}/empty).',
  },
  bucket_not_found: { status: 404, areas: ['storage'], message: 'Bucket not found' },
  duplicate: {
    status: 409,
    areas: ['storage'],
    message: 'The resource already exists',
  },
  entity_too_large: { status: 413, areas: ['storage'], message: 'The object exceeded the maximum allowed size' },
  invalid_bucket_name: {
    status: 400,
    areas: ['storage'],
    message: 'A bucket name is 2-63 characters of a-z, 0-9, dot, underscore and hyphen.',
  },
  invalid_cache_control: {
    status: 400,
    areas: ['storage'],
    message: 'Cache-Control must be directives such as "max-age=3600".',
  },
  invalid_expires_in: {
    status: 400,
    areas: ['storage'],
    message: 'expiresIn must be a whole number of seconds, from 1 to 315360000 (ten years).',
  },
  invalid_file_size_limit: {
    status: 400,
    areas: ['storage'],
    message: 'file_size_limit must be a number of bytes or a size such as "10MB".',
  },
  invalid_range: {
    status: 416,
    areas: ['storage'],
    message: 'The requested range is not satisfiable: it starts past the end of the object.',
  },
  invalid_key: { status: 400, areas: ['storage'], message: 'Invalid object name.' },
  invalid_metadata: {
    status: 400,
    areas: ['storage'],
    message: 'Metadata must be a JSON object of at most 8 KiB (x-metadata: base64 of it).',
  },
  invalid_mime_type: {
    status: 415,
    areas: ['storage'],
    message: 'This bucket does not accept this Content-Type.',
    otherStatuses: {
      400: 'Supabase Storage: a Content-Type header that is not a media type at all (its error handler answers 400).',
    },
  },
  invalid_mime_types: {
    status: 400,
    areas: ['storage'],
    message: 'allowed_mime_types must be a list of MIME types such as "image/png" or "image/*".',
  },
  invalid_signature: {
    status: 400,
    areas: ['storage'],
    message: 'The signed URL is invalid: its token was altered or belongs to another object.',
  },
  missing_token: { status: 400, areas: ['storage'], message: 'This URL needs its token query parameter.' },
  not_implemented: { status: 501, areas: ['storage'], message: 'Hearth does not implement this.' },
  quota_exceeded: {
    status: 422,
    areas: ['storage'],
    message:
      'The upload would take the project over its storage quota (config/storage quota_bytes). Delete objects or raise the quota.',
  },
  row_level_security: { status: 403, areas: ['storage'], message: 'new row violates row-level security policy' },
  signed_url_expired: { status: 400, areas: ['storage'], message: 'The signed URL has expired; ask for a new one.' },
  storage_unavailable: {
    status: 503,
    areas: ['storage'],
    message:
      "The storage backend (the S3-compatible store holding the objects' bytes) is not reachable right now; retry shortly.",
  },
  upload_interrupted: {
    status: 503,
    areas: ['storage'],
    message: 'The upload was interrupted while it was being stored; send it again.',
  },

  // management
  already_member: {
    status: 409,
    areas: ['management'],
    message: 'This person is already a member of this organization.',
  },
  api_key_exists: {
    status: 409,
    areas: ['management'],
    message: 'The project already has an API key of this type with this name.',
  },
  confirmation_required: {
    status: 400,
    areas: ['management'],
    message: 'Deleting drops the project\'s database: send {"confirm": "<project ref>"} to confirm.',
  },
  default_project: {
    status: 409,
    areas: ['management'],
    message: 'The default project (served at the server root) cannot be deleted.',
  },
  forbidden: {
    status: 403,
    areas: ['management', 'storage', 'realtime', 'workflows'],
    message: 'You are not allowed to do this.',
  },
  invalid_email: {
    status: 400,
    areas: ['management'],
    message: 'email must be an e-mail address such as ada@example.com.',
  },
  invalid_field: { status: 400, areas: ['management'], message: 'A field has a value it cannot take.' },
  invalid_name: {
    status: 400,
    areas: ['management', 'workflows', 'cron'],
    message: 'A name in the request is malformed; the message gives the pattern it must match.',
  },
  invalid_organization: {
    status: 400,
    areas: ['management'],
    message: 'organization_id must be the id of one of your organizations.',
  },
  invalid_password: {
    status: 400,
    areas: ['management'],
    message: 'password must be a string of 10 to 128 characters.',
  },
  invalid_role: { status: 400, areas: ['management'], message: 'role must be owner, admin or developer.' },
  last_api_key: {
    status: 409,
    areas: ['management'],
    message: "The project's last publishable or last secret key cannot be revoked; create another first.",
  },
  over_request_quota: {
    status: 429,
    areas: ['management'],
    message:
      'This project has used its daily request quota (config/limits daily_request_quota); it resets at 00:00 UTC.',
  },
  sql_error: { status: 400, areas: ['management'], message: 'PostgreSQL refused the statement.' },
  unauthorized: { status: 401, areas: ['management'], message: 'Missing or invalid credentials.' },
  unknown_field: {
    status: 400,
    areas: ['management', 'functions', 'workflows', 'cron'],
    message: 'The request has a field this route does not know.',
  },

  // functions
  client_cancelled: {
    status: 499,
    areas: ['functions'],
    message: 'The caller closed the connection before the request was sent.',
  },
  duplicate_secret_name: { status: 400, areas: ['functions'], message: 'A secret name appears twice in the request.' },
  function_boot_error: { status: 503, areas: ['functions'], message: 'The function failed to start.' },
  function_bundle_failed: { status: 400, areas: ['functions'], message: 'The function could not be bundled.' },
  function_crashed: {
    status: 502,
    areas: ['functions'],
    message: 'The function runtime stopped while handling the request.',
  },
  function_error: {
    status: 500,
    areas: ['functions'],
    message: 'The function failed while producing its response; its logs have the details.',
  },
  function_memory_limit: {
    status: 546,
    areas: ['functions'],
    message: 'The function exceeded its memory limit and was stopped.',
  },
  function_no_handler: {
    status: 500,
    areas: ['functions'],
    message: 'The function has no handler: call Deno.serve(handler) or export default { fetch(req, env) }.',
  },
  function_not_found: { status: 404, areas: ['functions'], message: 'No function with this name is deployed.' },
  function_timeout: { status: 504, areas: ['functions'], message: 'The function did not finish in time.' },
  function_too_large: {
    status: 400,
    areas: ['functions'],
    message: "The function's source is larger than a deploy accepts.",
  },
  function_unavailable: {
    status: 503,
    areas: ['functions'],
    message: 'The function kept changing or stopping while this request waited; retry.',
  },
  functions_stopped: { status: 503, areas: ['functions'], message: 'The functions runtime is shutting down.' },
  invalid_function_entrypoint: {
    status: 400,
    areas: ['functions'],
    message: 'entrypoint must be the path of one of the deployed files.',
  },
  invalid_function_name: {
    status: 400,
    areas: ['functions'],
    message: 'A function name is 1-64 characters of a-z, 0-9, _ and -, starting with a letter or digit.',
  },
  invalid_function_source: {
    status: 400,
    areas: ['functions'],
    message: 'A deploy needs at least one source file, e.g. { "index.ts": "Deno.serve(...)" }.',
  },
  invalid_project_ref: { status: 400, areas: ['functions'], message: 'The project ref is not valid.' },
  invalid_secret_name: {
    status: 400,
    areas: ['functions'],
    message: 'A secret name is letters, digits and _, not starting with a digit.',
  },
  invalid_secret_value: {
    status: 400,
    areas: ['functions'],
    message: 'A secret value must be a string the database can store.',
  },
  method_not_allowed: { status: 405, areas: ['functions'], message: 'This method is not allowed here.' },
  reserved_secret_name: {
    status: 400,
    areas: ['functions'],
    message: 'Secret names starting with SUPABASE_ are reserved for variables Hearth provides.',
  },
  too_many_secrets: {
    status: 400,
    areas: ['functions'],
    message: 'The project has reached its number of secrets; delete some first.',
  },

  // realtime
  invalid_message: { status: 400, areas: ['realtime'], message: 'A broadcast message is malformed.' },
  unavailable: {
    status: 503,
    areas: ['realtime'],
    message: 'Realtime could not accept the connection; retry shortly.',
  },
  unsupported_vsn: { status: 400, areas: ['realtime'], message: 'vsn must be 1.0.0 or 2.0.0.' },
  too_many_requests: {
    status: 429,
    areas: ['realtime'],
    message: 'You have exceeded your rate limit',
  },
  realtime_disabled: {
    status: 403,
    areas: ['realtime'],
    message: 'Realtime is disabled for this project (config/realtime enabled).',
  },

  // queues
  invalid_queue: {
    status: 400,
    areas: ['queues', 'workflows', 'cron'],
    message: 'queue must be a queue name matching ^[a-z][a-z0-9_]{0,47}$.',
  },

  // workflows
  invalid_definition: {
    status: 400,
    areas: ['workflows'],
    message: 'The step list breaks a validation rule; the message names the step.',
  },
  invalid_events: {
    status: 400,
    areas: ['workflows'],
    message: 'events must be a non-empty list of distinct values among "insert", "update" and "delete".',
  },
  invalid_filter: {
    status: 400,
    areas: ['workflows'],
    message: 'filter must be a flat object of at most 16 keys and 4 KiB naming columns of the table.',
  },
  invalid_signal: {
    status: 400,
    areas: ['workflows'],
    message: 'signal must be a name of 1-100 letters, digits or "_.:-".',
  },
  invalid_table: {
    status: 400,
    areas: ['workflows'],
    message: 'table must be a table name, optionally schema-qualified ("orders" or "app.orders").',
  },
  invalid_workflow: {
    status: 400,
    areas: ['workflows', 'cron'],
    message: 'workflow must be a workflow name matching ^[a-z0-9][a-z0-9_-]{0,63}$.',
  },
  queue_bound: { status: 409, areas: ['workflows'], message: 'The queue is already bound to a workflow.' },
  run_finished: { status: 409, areas: ['workflows'], message: 'The run has already finished.' },
  table_bound: { status: 409, areas: ['workflows'], message: 'The table is already bound to this workflow.' },

  // cron
  invalid_schedule: { status: 400, areas: ['cron'], message: 'schedule must be a 5-field cron expression in UTC.' },
  invalid_payload: {
    status: 400,
    areas: ['cron'],
    message: 'payload must be JSON the database can store, at most 256 KiB.',
  },
  invalid_target: { status: 400, areas: ['cron'], message: 'A webhook job needs a public https:// URL as its target.' },
  invalid_target_kind: { status: 400, areas: ['cron'], message: 'target_kind must be enqueue, webhook or workflow.' },
  job_exists: {
    status: 409,
    areas: ['cron'],
    message: 'The project already has a cron job of this name; delete it first to replace it.',
  },
  queue_not_found: {
    status: 400,
    areas: ['cron'],
    message: 'The project has no queue of this name: create it first, then the job.',
  },
  workflow_not_found: {
    status: 400,
    areas: ['cron'],
    message: 'The project has no workflow of this name: publish it first, then create the job.',
  },

  // start
  already_running: { status: 409, areas: ['start'], message: 'Hearth is already running on this data folder.' },
  database_not_started: { status: 503, areas: ['start'], message: 'PostgreSQL could not be started.' },
  database_not_stopped: {
    status: 503,
    areas: ['start'],
    message: 'A PostgreSQL left running in the data folder did not stop.',
  },
  driver_unpatched: {
    status: 500,
    areas: ['start'],
    message: 'The PostgreSQL driver is not patched as Hearth needs (reinstall with npm ci).',
  },
  invalid_config: {
    status: 400,
    areas: ['start'],
    message: 'A setting has a value it cannot take; the message names the setting and the values it accepts.',
  },
  migration_changed: { status: 500, areas: ['start'], message: 'A migration file was changed after it was applied.' },
  not_running: { status: 503, areas: ['start'], message: "Cannot reach Hearth's database. Is Hearth running?" },
  not_started: { status: 404, areas: ['start'], message: 'Hearth has not finished its first start yet.' },
  port_in_use: {
    status: 409,
    areas: ['start'],
    message: 'The port is already in use: choose another with HEARTH_PORT or --port.',
  },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof CATALOGUE;

type Entry<C extends ErrorCode> = (typeof CATALOGUE)[C];

/** The statuses a code may be answered with: its own, and those its entry lists with a reason. */
export type StatusOf<C extends ErrorCode> =
  | Entry<C>['status']
  | (Entry<C> extends { otherStatuses: infer O } ? keyof O : never);
