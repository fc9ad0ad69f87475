// The HTTP shapes of single sign-on: whether it is on (the login page asks), the start of a sign-in
// and the provider's answer at the callback.
import Type from 'typebox';

export const SsoSettingsSchema = Type.Object(
  {
    object: Type.Literal('sso_settings'),
    enabled: Type.Boolean({ description: 'Whether `auth.oidc` is configured.' }),
    provider: Type.Union([Type.String(), Type.Null()], {
      description: "The provider's name for the login button (`auth.oidc.display_name`).",
    }),
    login_url: Type.Union([Type.String(), Type.Null()], {
      description: 'Where the browser goes to sign in (`GET /v1/auth/oidc/login`).',
    }),
  },
  { $id: 'SsoSettings', title: 'SsoSettings' },
);

export const SsoLoginQuery = Type.Object({
  return_to: Type.Optional(
    Type.String({
      maxLength: 1000,
      description:
        'The dashboard path to go to once signed in (a local path such as `/keys`; anything else goes to `/`).',
    }),
  ),
});

const ProviderParameter = (description: string) =>
  Type.Optional(Type.String({ maxLength: 4096, description }));

/** The authorization response: openid-client reads and checks it from the raw query. */
export const SsoCallbackQuery = Type.Object(
  {
    code: ProviderParameter('The authorization code.'),
    state: ProviderParameter('The state the sign-in was started with.'),
    iss: ProviderParameter('The issuer that answered (RFC 9207), when the provider sends it.'),
    error: ProviderParameter("The provider's error code when it refused."),
    error_description: ProviderParameter("The provider's description of its error."),
  },
  { additionalProperties: Type.String({ maxLength: 4096 }) },
);
