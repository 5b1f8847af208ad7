/** The part of `oidc-provider`'s API the tests use (the package ships no type declarations). */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface Account {
    accountId: string;
    claims(): Promise<Record<string, unknown>>;
  }

  interface Configuration {
    clients: Record<string, unknown>[];
    claims?: Record<string, string[]>;
    findAccount?: (ctx: unknown, id: string) => Promise<Account | undefined>;
    cookies?: { keys: string[] };
    features?: Record<string, { enabled: boolean }>;
    pkce?: { required: (ctx: unknown, client: unknown) => boolean };
    ttl?: Record<string, number>;
  }

  export default class Provider {
    constructor(issuer: string, configuration: Configuration);
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
    on(event: 'server_error', listener: (ctx: unknown, error: Error) => void): this;
  }
}
