// The HTTP shapes of dashboard sessions: the login body and who is calling (the principal, with
// its session when it came with the cookie).
import Type from 'typebox';
import { scopes } from '../../auth/scopes.js';
import { commonParameters, NullableTimestamp, Timestamp } from '../../http/schemas/common.js';

const ScopeSchema = Type.Enum(scopes);

const SessionKeySchema = Type.Object({
  id: Type.String({ description: 'key_…' }),
  name: Type.String(),
  display_key: Type.String(),
  expires_at: NullableTimestamp(),
});

const SessionInfoSchema = Type.Object({
  id: Type.String({ description: 'sess_…' }),
  created_at: Timestamp(),
  expires_at: Timestamp('The absolute end of the session, however active.'),
  idle_expires_at: Timestamp('When the session ends unless it is used again before.'),
  csrf_token: Type.String({
    description:
      'Send it back in X-CSRF-Token on every request made with the cookie that changes state (POST, PUT, PATCH, DELETE).',
  }),
});

const SsoUserSchema = Type.Object({
  id: Type.String({ description: 'ssou_…' }),
  issuer: Type.String({ description: "The identity provider's issuer identifier." }),
  subject: Type.String({ description: "The person's `sub` at the identity provider." }),
  email: Type.Union([Type.String(), Type.Null()]),
  name: Type.Union([Type.String(), Type.Null()]),
  roles: Type.Array(Type.String(), {
    description: 'The roles their claims named at their last sign-in.',
  }),
});

export const MeSchema = Type.Object(
  {
    object: Type.Literal('principal'),
    authenticated_by: Type.Union(
      [Type.Literal('session'), Type.Literal('api_key'), Type.Literal('sso')],
      {
        description:
          '`session`: a dashboard session opened with a key; `sso`: one opened by single sign-on (see `user`); `api_key`: the key sent with the request.',
      },
    ),
    account: Type.Object({
      id: Type.String(),
      name: Type.String(),
      kind: Type.Union([Type.Literal('owner'), Type.Literal('member')]),
    }),
    key: SessionKeySchema,
    scopes: Type.Array(ScopeSchema),
    tier: Type.String(),
    user: Type.Union([SsoUserSchema, Type.Null()], {
      description: 'The person, for a session opened by single sign-on.',
    }),
    session: Type.Union([SessionInfoSchema, Type.Null()], {
      description: 'The session, when the request came with the session cookie.',
    }),
  },
  { $id: 'Principal', title: 'Principal' },
);

export const LoginBody = Type.Object(
  {
    api_key: Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'The API key to log in with.',
    }),
    ...commonParameters(),
  },
  { additionalProperties: false },
);

export const LogoutResponseSchema = Type.Object({
  success: Type.Boolean(),
  session_ended: Type.Boolean(),
  /** A single-sign-on person's: the identity provider's logout, where the browser goes next. */
  end_session_url: Type.Union([Type.String(), Type.Null()]),
});
