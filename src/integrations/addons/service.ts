/**
 * Integrations (Unleash's addons): their rules (a known provider, its required parameters,
 * secrets masked on every read and kept when an update sends the mask back) and events.
 */
import type { Actor } from '../../db/events';
import type { Db } from '../../db/client';
import { badRequest, notFound } from '../../http/errors';
import { PROVIDERS, type ProviderDefinition } from './providers';
import type { AddonCreateUpdate } from './schema';
import * as store from './store';

/** What Unleash shows instead of a secret, and accepts back as "unchanged". */
const MASKED_VALUE = '*****';
const NOT_FOUND = 'Could not find addon';

const PROVIDER_BY_NAME = new Map(PROVIDERS.map((provider) => [provider.name, provider]));

function providerOf(name: string): ProviderDefinition | undefined {
  return PROVIDER_BY_NAME.get(name);
}

/** The names of a provider's sensitive parameters. */
export function sensitiveParameters(provider: string): Set<string> {
  return new Set((providerOf(provider)?.parameters ?? []).filter((parameter) => parameter.sensitive).map((parameter) => parameter.name));
}

/**
 * An integration as Unleash answers it: keys in its order, sensitive parameters masked.
 * `sent`: the parameters of the request being answered; a write's answer shows them as the
 * caller sent them (as 6.10.1 answers the new configuration), which reveals nothing the caller
 * did not just send: a secret sent back masked stays masked.
 */
function addonBody(row: store.AddonRow, withCreatedAt = true, sent?: Record<string, unknown>) {
  const sensitive = sensitiveParameters(row.provider);
  const parameters: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row.parameters))
    parameters[key] = sensitive.has(key) ? (sent !== undefined && key in sent ? sent[key] : MASKED_VALUE) : value;
  return {
    id: row.id,
    provider: row.provider,
    enabled: row.enabled,
    description: row.description,
    parameters,
    events: row.events,
    projects: row.projects,
    environments: row.environments,
    ...(withCreatedAt ? { createdAt: row.createdAt } : {}),
  };
}

/** The integration in audit events: everything but its parameters. */
function eventData(row: store.AddonRow) {
  const { parameters: _parameters, ...rest } = addonBody(row);
  return rest;
}

function validate(body: AddonCreateUpdate): ProviderDefinition {
  const provider = providerOf(body.provider);
  if (provider === undefined) throw badRequest(`Unknown addon provider ${body.provider}`, { path: '/body/provider' });
  const missing = provider.parameters
    .filter((parameter) => parameter.required && !(parameter.name in body.parameters))
    .map((parameter) => parameter.name);
  if (missing.length > 0) throw badRequest(`Missing required parameters: ${missing.join(',')}`, { path: '/body/parameters' });
  return provider;
}

function columns(
  body: AddonCreateUpdate,
  parameters: Record<string, string | number | boolean>,
  description: string | null = body.description ?? null,
): store.NewAddon {
  return {
    provider: body.provider,
    description,
    enabled: body.enabled,
    parameters,
    events: body.events,
    projects: body.projects ?? [],
    environments: body.environments ?? [],
  };
}

export async function listAddons(db: Db) {
  return { addons: (await store.listAddons(db)).map((row) => addonBody(row)), providers: [...PROVIDERS] };
}

async function existing(db: Db, id: number): Promise<store.AddonRow> {
  const row = Number.isSafeInteger(id) ? await store.findAddon(db, id) : undefined;
  if (row === undefined) throw notFound(NOT_FOUND);
  return row;
}

export async function getAddon(db: Db, id: number) {
  return addonBody(await existing(db, id));
}

export async function createAddon(db: Db, actor: Actor, body: AddonCreateUpdate) {
  const provider = validate(body);
  // As Unleash does: the provider's tag types (`slack`, `datadog`…) are created with it when missing.
  const tagTypes = (provider.tagTypes ?? []) as store.ProviderTagType[];
  const row = await store.insertAddon(db, actor, columns(body, body.parameters), tagTypes);
  // Unleash answers a new integration without its creation time.
  return addonBody(row, false, body.parameters);
}

export async function updateAddon(db: Db, actor: Actor, id: number, body: AddonCreateUpdate) {
  const before = await existing(db, id);
  validate(body);
  // A secret sent back masked (as the UI does when it was not changed) keeps its stored value.
  const sensitive = sensitiveParameters(body.provider);
  const parameters: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(body.parameters)) {
    const kept = before.parameters[key];
    parameters[key] = value === MASKED_VALUE && sensitive.has(key) && kept !== undefined ? kept : value;
  }
  // As 6.10.1: a description left out keeps the stored one; null clears it to "".
  const description = body.description === undefined ? before.description : (body.description ?? '');
  const after: store.AddonRow = { ...before, ...columns(body, parameters, description) };
  const updated = await store.updateAddon(db, actor, id, columns(body, parameters, description), {
    type: 'addon-config-updated',
    data: eventData(after),
    preData: eventData(before),
  });
  if (!updated) throw notFound(NOT_FOUND);
  return addonBody(after, true, body.parameters);
}

export async function deleteAddon(db: Db, actor: Actor, id: number): Promise<void> {
  const before = await existing(db, id);
  const deleted = await store.deleteAddon(db, actor, id, { type: 'addon-config-deleted', preData: eventData(before) });
  if (!deleted) throw notFound(NOT_FOUND);
}

/** Unleash's paging of the delivery log: 1..100 per page (else 50), from a non-negative offset. */
export async function integrationEvents(db: Db, id: number, limit?: string, offset?: string) {
  const size = Number(limit ?? '50');
  const from = Number(offset ?? '0');
  const rows = await store.integrationEventsOf(
    db,
    id,
    size >= 1 && size <= 100 ? Math.floor(size) : 50,
    from > 0 && Number.isSafeInteger(Math.floor(from)) ? Math.floor(from) : 0,
  );
  return {
    integrationEvents: rows.map((row) => ({
      id: String(row.id),
      integrationId: row.integrationId,
      createdAt: row.createdAt,
      state: row.state as 'success' | 'failed' | 'successWithErrors',
      stateDetails: row.stateDetails,
      event: row.event as Record<string, unknown>,
      details: row.details,
    })),
  };
}
