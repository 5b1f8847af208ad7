/**
 * A real OpenID provider for the sign-in flows: `oidc-provider` (npm) on a free loopback port,
 * with its development interactions (any login and password are accepted; the login becomes
 * the account id, which we use as the email address). It serves discovery, the authorization
 * and token endpoints, its keys, userinfo and RP-initiated logout, and enforces PKCE.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  stop(): Promise<void>;
}

export async function startProvider(options: { workerBase: string; clientId: string; clientSecret: string }): Promise<TestProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  // `localhost`, not 127.0.0.1: another site than the Worker's, as a real provider is.
  const issuer = `http://localhost:${port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: options.clientId,
        client_secret: options.clientSecret,
        redirect_uris: [`${options.workerBase}/auth/oidc/callback`],
        post_logout_redirect_uris: [`${options.workerBase}/login`],
        response_types: ['code'],
        grant_types: ['authorization_code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    async findAccount(_ctx, id) {
      return {
        accountId: id,
        async claims() {
          return { sub: id, email: id, email_verified: true, name: `SSO ${id.split('@')[0]}` };
        },
      };
    },
    cookies: { keys: ['oidc-provider-test-cookie-key'] },
    // Fixed lifetimes: the defaults are functions that print a notice on every use.
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
    features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
    pkce: { required: () => true },
  });
  // Its warnings about development defaults are expected here.
  provider.on('server_error', (_ctx, error) => console.error('oidc-provider error', error));
  server.on('request', provider.callback());
  return {
    issuer,
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
