/**
 * The client-specification suite through the frontend API: each file's state is written into
 * D1, and every test and variant test is asked of `POST /api/frontend` with the test's
 * context. The answer lists the flags that are on, with their variants.
 *
 * The frontend API reads a context as Unleash 6.10.1's does, which is not quite how an SDK
 * does: a missing session id becomes a fresh random one, a missing address the caller's
 * (198.51.100.77 here, in no range of the suite), and `currentTime` is not a field of the
 * context but a custom property, so date constraints compare with the time of the request.
 * The tests whose answer that changes are listed in AS_THE_FRONTEND_API_READS_IT with the
 * answer for the context as read (the suite's dates are all in January 2022, long past).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import index from '@unleash/client-specification/specifications/index.json';
import { bodyOf, call, createToken } from './support/http';
import { specFile } from './support/client-specification';
import { storeSpecState, unrepresentable } from './support/client-specification-store';

const CALLER = '198.51.100.77';
let frontendToken: string;

beforeAll(async () => {
  frontendToken = await createToken({ tokenName: 'spec-frontend', type: 'frontend', environment: 'development' });
});

/** `file: description` -> what the frontend API answers for the context as it reads it. */
const AS_THE_FRONTEND_API_READS_IT: Record<string, boolean> = {
  // 100% of sessions, and the frontend API gives every context a session.
  '04-gradual-rollout-session-id-strategy.json: Feature.A4 should be disabled when no user on context': true,
  // Date constraints against the time of the request: after 2022-01-29, not before it, not within a week of January 2022.
  '13-constraint-operators.json: F7.dateAfter should be disabled': true,
  '13-constraint-operators.json: F7.dateAfter is exclusive of date parameter': true,
  '13-constraint-operators.json: F7.dateBefore should be enabled': false,
  '13-constraint-operators.json: F7.date-range should be enabled': false,
  '13-constraint-operators.json: F7.date-with-timezone should respect timezone': false,
};

interface Toggle {
  name: string;
  variant: { name: string; enabled: boolean; payload?: unknown; feature_enabled: boolean; featureEnabled: boolean };
}

async function toggles(context: unknown): Promise<Toggle[]> {
  const response = await call('POST', '/api/frontend', {
    token: frontendToken,
    body: { context },
    headers: { 'cf-connecting-ip': CALLER },
  });
  expect(response.status).toBe(200);
  return (await bodyOf<{ toggles: Toggle[] }>(response)).toggles;
}

const STATE_FILES = index.filter((name) => !specFile(name).state.events);

describe('client specification, through the frontend API', () => {
  it('every exception names a test of the suite', () => {
    const all = new Set(STATE_FILES.flatMap((name) => (specFile(name).tests ?? []).map((test) => `${name}: ${test.description}`)));
    for (const key of Object.keys(AS_THE_FRONTEND_API_READS_IT)) expect(all).toContain(key);
  });

  for (const name of STATE_FILES) {
    it(`${name}: every test and variant test`, async () => {
      const file = specFile(name);
      const features = file.state.features ?? [];
      const segments = file.state.segments ?? [];
      const skip = unrepresentable(features, segments);
      await storeSpecState(features, segments, skip);
      const tests = (file.tests ?? []).filter((test) => !skip.has(test.toggleName));
      const answers: [string, boolean][] = [];
      for (const test of tests)
        answers.push([test.description, (await toggles(test.context)).some((toggle) => toggle.name === test.toggleName)]);
      expect(answers).toEqual(
        tests.map((test) => [test.description, AS_THE_FRONTEND_API_READS_IT[`${name}: ${test.description}`] ?? test.expectedResult]),
      );

      const variantTests = (file.variantTests ?? []).filter((test) => !skip.has(test.toggleName));
      const variants: [string, unknown][] = [];
      for (const test of variantTests) {
        const toggle = (await toggles(test.context)).find((candidate) => candidate.name === test.toggleName);
        // A flag that is off is not listed: its variant is the disabled one.
        variants.push([
          test.description,
          toggle ? toggle.variant : { name: 'disabled', enabled: false, feature_enabled: false, featureEnabled: false },
        ]);
      }
      expect(variants).toEqual(
        variantTests.map((test) => [test.description, { ...test.expectedResult, featureEnabled: test.expectedResult.feature_enabled }]),
      );
    });
  }
});
