// Table shapes of single sign-on (migration 023): the people who signed in through the OpenID
// Connect provider, and the sign-ins under way.

export interface SsoUsersTable {
  id: string;
  /** The provider's issuer identifier; with `subject`, who the person is (unique together). */
  issuer: string;
  subject: string;
  account_id: string;
  /** The key the person's sessions are opened on (minted for them, never shown). */
  api_key_id: string;
  email: string | null;
  name: string | null;
  /** JSON array of the roles the claims named at the last sign-in. */
  roles: string;
  created_at: string;
  last_login_at: string;
}

export interface SsoLoginStatesTable {
  /** SHA-256 of the browser cookie's random value; the value itself is never stored. */
  id: string;
  state: string;
  nonce: string;
  code_verifier: string;
  redirect_uri: string;
  /** The dashboard path the person goes to once signed in. */
  return_to: string;
  created_at: string;
  expires_at: string;
}
