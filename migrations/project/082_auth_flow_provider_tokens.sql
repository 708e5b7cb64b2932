-- Social sign-in under PKCE (src/auth/oauth.ts, pkce.ts): the provider's
-- access and refresh tokens wait in the flow until POST /token?grant_type=pkce
-- answers them as provider_token and provider_refresh_token, as GoTrue does.
-- Sealed with the master key like the provider PKCE verifier of
-- auth.oauth_states; cleared when the code is exchanged, and gone with the
-- flow row otherwise (purged a day after it started).
alter table auth.flow_state add column provider_token_sealed text;
-- Null when the provider gave no refresh token.
alter table auth.flow_state add column provider_refresh_token_sealed text;
