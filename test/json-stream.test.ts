import { describe, expect, it } from 'vitest';
import { ApiError, toErrorResponse } from '../src/http/errors';
import { splitJsonBody, type OnItem, type SplitJsonOptions, type SplitJsonResult } from '../src/http/json-stream';

const OPTIONS: SplitJsonOptions = { splitKey: 'data', maxBytes: 10_000_000, maxValueBytes: 1_000_000 };
const NOT_JSON = 'The request body is not valid JSON: ';
const NOT_UTF8 = 'The request body is not valid JSON: it is not valid UTF-8 text.';
const EMPTY = 'The request body is not valid JSON: it is empty.';
const CHUNK_SIZES = [1, 7, 64 * 1024];

type ChunkSizes = number | (() => number);

function bytesOf(body: string | Uint8Array): Uint8Array {
  return typeof body === 'string' ? new TextEncoder().encode(body) : body;
}

/** A body stream handing out chunks of the given size(s); pulled only when read, so reading is observable. */
function streamOf(
  body: string | Uint8Array,
  sizes: ChunkSizes,
  probe: { pulled: number; cancelled: boolean } = { pulled: 0, cancelled: false },
) {
  const bytes = bytesOf(body);
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (probe.pulled >= bytes.length) return controller.close();
        const size = typeof sizes === 'number' ? sizes : sizes();
        // A copy, so a scanner that kept a view of an old chunk would be caught by later chunks reusing nothing.
        controller.enqueue(bytes.slice(probe.pulled, probe.pulled + size));
        probe.pulled += size;
      },
      cancel() {
        probe.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
}

interface Run {
  result: SplitJsonResult;
  items: [string, number, unknown][];
}

async function run(body: string | Uint8Array, sizes: ChunkSizes = 7, options: Partial<SplitJsonOptions> = {}): Promise<Run> {
  const items: [string, number, unknown][] = [];
  const bytes = bytesOf(body);
  const result = await splitJsonBody(streamOf(bytes, sizes), bytes.length, { ...OPTIONS, ...options }, (key, index, value) => {
    items.push([key, index, value]);
  });
  return { result, items };
}

async function failure(body: string | Uint8Array, sizes: ChunkSizes = 7, options: Partial<SplitJsonOptions> = {}): Promise<ApiError> {
  try {
    await run(body, sizes, options);
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error(`expected an error for ${typeof body === 'string' ? body.slice(0, 200) : 'bytes'}`);
}

async function expectInvalid(body: string | Uint8Array, sizes: ChunkSizes = 7): Promise<string> {
  const error = await failure(body, sizes);
  expect(error.status).toBe(400);
  expect(error.name).toBe('ValidationError');
  const message = error.details[0]!.message;
  expect(message.startsWith(NOT_JSON)).toBe(true);
  return message;
}

/** Rebuilds the whole document from a run, for comparison with JSON.parse of the text. */
function reassemble({ result, items }: Run, splitKey = 'data'): unknown {
  if (!result.isObject) return result.value;
  const out: Record<string, unknown> = Object.fromEntries(result.top);
  if (result.splitKind === 'other') out[splitKey] = result.splitValue;
  if (result.splitKind === 'object') {
    const split: Record<string, unknown> = {};
    for (const [key, entry] of result.split) split[key] = entry.streamed ? [] : entry.value;
    for (const [key, index, value] of items) {
      const list = split[key] as unknown[];
      expect(index).toBe(list.length);
      list.push(value);
    }
    for (const [key, entry] of result.split) if (entry.streamed) expect((split[key] as unknown[]).length).toBe(entry.count);
    out[splitKey] = split;
  }
  return out;
}

const SAMPLE = JSON.stringify({
  project: 'default',
  data: {
    features: [{ name: 'a', tags: ['x', ']'] }, { name: 'b' }, { name: 'c"]}\\' }],
    meta: { version: 2 },
    featureStrategies: [{ name: 'default', parameters: {} }, 1, 'two', null, true, false, [3, [4]], -1.5e3],
    empty: [],
    label: 'text',
    count: 5,
    nothing: null,
  },
  environment: 'production',
  list: [1, 2],
});

describe('splitJsonBody', () => {
  it.each(CHUNK_SIZES)('streams every item in order with its index (chunks of %i bytes)', async (size) => {
    const { result, items } = await run(SAMPLE, size);
    expect(items).toEqual([
      ['features', 0, { name: 'a', tags: ['x', ']'] }],
      ['features', 1, { name: 'b' }],
      ['features', 2, { name: 'c"]}\\' }],
      ['featureStrategies', 0, { name: 'default', parameters: {} }],
      ['featureStrategies', 1, 1],
      ['featureStrategies', 2, 'two'],
      ['featureStrategies', 3, null],
      ['featureStrategies', 4, true],
      ['featureStrategies', 5, false],
      ['featureStrategies', 6, [3, [4]]],
      ['featureStrategies', 7, -1500],
    ]);
    expect(result.isObject).toBe(true);
    expect(result.bytes).toBe(new TextEncoder().encode(SAMPLE).length);
    expect([...result.top]).toEqual([
      ['project', 'default'],
      ['environment', 'production'],
      ['list', [1, 2]],
    ]);
    expect(result.splitKind).toBe('object');
    expect([...result.split]).toEqual([
      ['features', { streamed: true, count: 3 }],
      ['meta', { streamed: false, value: { version: 2 } }],
      ['featureStrategies', { streamed: true, count: 8 }],
      ['empty', { streamed: true, count: 0 }],
      ['label', { streamed: false, value: 'text' }],
      ['count', { streamed: false, value: 5 }],
      ['nothing', { streamed: false, value: null }],
    ]);
  });

  it.each(CHUNK_SIZES)('accepts JSON whitespace between every token (chunks of %i bytes)', async (size) => {
    const body = ' \t\r\n{ "a" :\n1 ,\t"data"\r:\n{ "f" : [ 1 , { "x" : [ ] } , "s" ] , "g" : { } } , "b" : [ ] }\n\t ';
    const { result, items } = await run(body, size);
    expect(items).toEqual([
      ['f', 0, 1],
      ['f', 1, { x: [] }],
      ['f', 2, 's'],
    ]);
    expect([...result.top]).toEqual([
      ['a', 1],
      ['b', []],
    ]);
    expect([...result.split]).toEqual([
      ['f', { streamed: true, count: 3 }],
      ['g', { streamed: false, value: {} }],
    ]);
  });

  it.each(CHUNK_SIZES)('keeps strings with brackets, quotes and backslashes whole (chunks of %i bytes)', async (size) => {
    const tricky = ['a\\"]}', ']', '[', '{', '}', '\\', '"', '\\\\"}]', 'x\\', '\\u0041', '\u0000\u001f', '\ud83d\ude00'];
    const body = `{"data":{"f":${JSON.stringify(tricky)},"g":[${tricky.map((s) => JSON.stringify({ [s]: [s, { s }] })).join(',')}]}}`;
    const { items } = await run(body, size);
    expect(items.filter(([key]) => key === 'f').map(([, , value]) => value)).toEqual(tricky);
    expect(items.filter(([key]) => key === 'g').map(([, , value]) => value)).toEqual(tricky.map((s) => ({ [s]: [s, { s }] })));
    // The literal case from the brief: `"a\\\"]}"` is the string a\"]} and must not close the array.
    const literal = await run('{"data":{"f":["a\\\\\\"]}", 2]}}', size);
    expect(literal.items).toEqual([
      ['f', 0, 'a\\"]}'],
      ['f', 1, 2],
    ]);
  });

  it('decodes escaped keys, including the split key itself', async () => {
    const { result, items } = await run('{"d\\u0061ta":{"fe\\u00e9\\"":[1]},"p\\/q":2}', 1);
    expect(result.splitKind).toBe('object');
    expect(items).toEqual([['feé"', 0, 1]]);
    expect([...result.top]).toEqual([['p/q', 2]]);
  });

  it('streams deeply nested items', async () => {
    const deep = `${'['.repeat(5000)}"x"${']'.repeat(5000)}`;
    const { items } = await run(`{"data":{"f":[${deep},{"a":${deep}}]}}`, 64 * 1024);
    expect(items.length).toBe(2);
    expect(JSON.stringify(items[0]![2])).toBe(deep);
  });

  it('uses a custom split key and leaves `data` as an ordinary top-level value', async () => {
    const { result, items } = await run('{"data":{"f":[1]},"rows":{"r":[true]}}', 3, { splitKey: 'rows' });
    expect([...result.top]).toEqual([['data', { f: [1] }]]);
    expect(items).toEqual([['r', 0, true]]);
  });

  describe('a body that is not an object', () => {
    it.each([
      ['[1, {"a": [2]}]', [1, { a: [2] }]],
      ['42', 42],
      [' -1.5e2 ', -150],
      ['"text"', 'text'],
      ['null', null],
      ['true', true],
      ['\n[]\n', []],
    ])('parses %s whole', async (body, expected) => {
      for (const size of [1, 64 * 1024]) {
        const { result, items } = await run(body, size);
        expect(result.isObject).toBe(false);
        expect(result.value).toEqual(expected);
        expect(result.top.size).toBe(0);
        expect(items).toEqual([]);
      }
    });

    it('is refused with 413 above maxValueBytes', async () => {
      const error = await failure(JSON.stringify(Array.from({ length: 100 }, (_, i) => i)), 7, { maxValueBytes: 50 });
      expect(error.status).toBe(413);
      expect(error.name).toBe('PayloadTooLargeError');
      expect(error.message).toContain('`/body`');
    });

    it('reports a syntax error with the same message as JSON.parse', async () => {
      let expected = '';
      try {
        JSON.parse('[1,');
      } catch (error) {
        expected = (error as Error).message;
      }
      expect(await expectInvalid('[1,')).toBe(`${NOT_JSON}${expected}`);
    });
  });

  describe('the split key with a value that is not an object', () => {
    it.each([
      ['[1,2]', [1, 2]],
      ['null', null],
      ['"x"', 'x'],
      ['7', 7],
    ])('keeps %s as splitValue', async (value, expected) => {
      const { result, items } = await run(`{"a":1,"data":${value},"b":2}`, 1);
      expect(result.splitKind).toBe('other');
      expect(result.splitValue).toEqual(expected);
      expect(result.split.size).toBe(0);
      expect(items).toEqual([]);
      expect([...result.top]).toEqual([
        ['a', 1],
        ['b', 2],
      ]);
    });

    it('leaves splitKind undefined when the key is absent', async () => {
      const { result } = await run('{"a":{"data":{"f":[1]}}}');
      expect(result.splitKind).toBeUndefined();
      expect(result.split.size).toBe(0);
      expect(result.top.get('a')).toEqual({ data: { f: [1] } });
    });

    it('is held to maxValueBytes', async () => {
      const error = await failure(`{"data":"${'x'.repeat(100)}"}`, 7, { maxValueBytes: 50 });
      expect(error.status).toBe(413);
      expect(error.message).toContain('`/body/data`');
    });
  });

  describe('malformed JSON', () => {
    const malformed = [
      '{',
      '{ ',
      '{"a"',
      '{"a":',
      '{"a":1',
      '{"a":1,',
      '{"a',
      '{"a\\',
      '{"data":{',
      '{"data":{"f"',
      '{"data":{"f":',
      '{"data":{"f":[',
      '{"data":{"f":[1',
      '{"data":{"f":[1,',
      '{"data":{"f":[{"a":1}',
      '{"data":{"f":["abc',
      '{"data":{"f":["abc\\',
      '{"data":{"f":[1]',
      '{"data":{"f":[1]}',
      '{"data":{"f":[1]},',
      '{"a":1}x',
      '{"a":1}{}',
      '{"a":1},',
      '{"a":1} ]',
      '{"a":1}}',
      '{"data":{"f":[1]}}]',
      '{,}',
      '{"a":1,}',
      '{"a":1 "b":2}',
      '{"a" 1}',
      '{"a"::1}',
      '{"a":,}',
      '{"a":}',
      '{a:1}',
      '{1:2}',
      "{'a':1}",
      '{"a":1,,"b":2}',
      '{"data":{,}}',
      '{"data":{"f":[1],}}',
      '{"data":{"f":[1,]}}',
      '{"data":{"f":[,1]}}',
      '{"data":{"f":[1 2]}}',
      '{"data":{"f":[1,,2]}}',
      '{"data":{"f":[1]]}}',
      '{"data":{"f":[1}}}',
      '{"data":{"f" [1]}}',
      '{"data":{"f":[{"a":}]}}',
      '{"data":{"f":[{"a":1,}]}}',
      '{"data":{"f":[tru]}}',
      '{"data":{"f":[nul]}}',
      '{"data":{"f":[01]}}',
      '{"data":{"f":[1.]}}',
      '{"data":{"f":[-]}}',
      '{"data":{"f":[+1]}}',
      '{"data":{"f":[NaN]}}',
      '{"data":{"f":[Infinity]}}',
      '{"data":{"f":[[1}]}}',
      '{"data":{"f":[{"a":1]]}}',
      '{"data":{"f":["a\\x"]}}',
      '{"data":{"f":["\\u12"]}}',
      '{"data":{"f":["a\nb"]}}',
      '{"data":{"f":["tab\there"]}}',
      '{"data":{"f":[1"x"]}}',
      '{"data":{"f":[@]}}',
      '{"data":{"f":[1@]}}',
      '{"data":{"f":[1é]}}',
      '{"data":{"x":tru}}',
      '{"data":{"x":{"a":1]}}',
      '{"data":tru}',
      '{"data":[1,}',
      '{"a\\q":1}',
      '{"a\n":1}',
      '{"data":{"a\\q":[]}}',
      '{"a":[1,}',
      '{"a":"b}',
      '{"a":1é}',
      '{"a":@}',
      '{é:1}',
      '[1,',
      '[1]x',
      'tru',
      '"abc',
      '}',
      ']',
      ',',
      '\u00a0{}',
      '\ufeff\ufeff{}',
    ];

    it('all fail JSON.parse too (sanity check of the cases)', () => {
      for (const body of malformed) expect(() => JSON.parse(body.replace(/^\ufeff/, '')), body).toThrow();
    });

    it.each([1, 3, 64 * 1024])('are refused with 400 and a reason (chunks of %i bytes)', async (size) => {
      for (const body of malformed) {
        const error = await failure(body, size).catch((e: unknown) => {
          throw new Error(`${JSON.stringify(body)}: ${String(e)}`);
        });
        expect(error.status, body).toBe(400);
        expect(error.name, body).toBe('ValidationError');
        expect(error.details[0]!.message.startsWith(NOT_JSON), body).toBe(true);
        expect(error.details[0]!.message.length, body).toBeGreaterThan(NOT_JSON.length + 5);
      }
    });

    it('names the offending token and its byte offset', async () => {
      expect(await expectInvalid('{"a":1,}', 1)).toBe(`${NOT_JSON}Unexpected token '}' at byte 7`);
      expect(await expectInvalid('{"a":1} x', 2)).toBe(`${NOT_JSON}Unexpected token 'x' at byte 8`);
      expect(await expectInvalid('{"a":1', 1)).toBe(`${NOT_JSON}Unexpected end of JSON input at byte 6`);
      expect(await expectInvalid('{"a":1\u00e9}')).toBe(`${NOT_JSON}Unexpected byte 0xC3 at byte 6`);
      expect(await expectInvalid('{"data":{"f":[@]}}')).toBe(`${NOT_JSON}Unexpected token '@' at byte 14`);
    });

    it("names the element's path when JSON.parse rejects it", async () => {
      const message = await expectInvalid('{"data":{"f":[1,{"a":}]}}', 1);
      expect(message).toContain('`/body/data/f/1`');
      expect(message).toContain('starts at byte 16');
      const error = await failure('{"data":{"f":[1,{"a":}]}}');
      expect(error.details[0]!.path).toBe('/body/data/f/1');
    });

    it('refuses an empty body, whitespace, a lone BOM and a null stream with the readJsonBody message', async () => {
      for (const body of ['', ' \n\t\r ', '\ufeff', '\ufeff  ']) {
        for (const size of [1, 64]) expect(await expectInvalid(body, size)).toBe(EMPTY);
      }
      const error = await splitJsonBody(null, null, OPTIONS, () => undefined).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).details[0]!.message).toBe(EMPTY);
    });

    it('becomes an Unleash error response', async () => {
      const response = toErrorResponse(await failure('{"a":1,}'));
      expect(response.status).toBe(400);
      const body = await response.json<{ name: string; message: string; details: { message: string }[] }>();
      expect(body.name).toBe('ValidationError');
      expect(body.message).toContain('Request validation failed');
      expect(body.details[0]!.message).toBe(`${NOT_JSON}Unexpected token '}' at byte 7`);
    });
  });

  describe('UTF-8', () => {
    it.each([1, 2, 3, 5])('decodes multi-byte characters split across chunks (chunks of %i bytes)', async (size) => {
      const body = '{"é😀":"ü€","data":{"fé😀":["😀é",{"k😀":"€"}],"m":"é"}}';
      const { result, items } = await run(body, size);
      expect([...result.top]).toEqual([['é😀', 'ü€']]);
      expect(items).toEqual([
        ['fé😀', 0, '😀é'],
        ['fé😀', 1, { 'k😀': '€' }],
      ]);
      expect(result.split.get('m')).toEqual({ streamed: false, value: 'é' });
    });

    const invalid: [string, number[]][] = [
      ['0xFF in an item', [0xff]],
      ['a lone continuation byte', [0x80]],
      ['an overlong slash', [0xc0, 0xaf]],
      ['an encoded surrogate', [0xed, 0xa0, 0x80]],
      ['a truncated euro sign', [0xe2, 0x82]],
      ['a code point above U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
    ];

    it.each(invalid)('refuses %s wherever it is', async (_, bad) => {
      const make = (before: string, after: string) =>
        new Uint8Array([...new TextEncoder().encode(before), ...bad, ...new TextEncoder().encode(after)]);
      const places = [
        make('{"data":{"f":[1,"', '"]}}'),
        make('{"data":{"f":[{"', '":1}]}}'),
        make('{"data":{"', '":[]}}'),
        make('{"data":{"x":"', '"}}'),
        make('{"', '":1}'),
        make('{"a":["', '"]}'),
        make('["', '"]'),
      ];
      for (const body of places) {
        for (const size of [1, 64 * 1024]) expect(await expectInvalid(body, size)).toBe(NOT_UTF8);
      }
      // Between tokens it is a syntax error rather than a text one; either way it is refused.
      await expectInvalid(make('{"a":1', '}'));
    });
  });

  describe('byte order mark', () => {
    it.each([1, 2, 64 * 1024])('accepts a leading BOM (chunks of %i bytes)', async (size) => {
      const object = await run('\ufeff{"a":1,"data":{"f":[2]}}', size);
      expect([...object.result.top]).toEqual([['a', 1]]);
      expect(object.items).toEqual([['f', 0, 2]]);
      const whole = await run('\ufeff[1]', size);
      expect(whole.result.value).toEqual([1]);
    });

    it('refuses a BOM anywhere else', async () => {
      await expectInvalid('{\ufeff"a":1}', 1);
      await expectInvalid(' \ufeff{"a":1}', 1);
      await expectInvalid('\ufeff\ufeff{"a":1}', 1);
    });

    it('counts the BOM in error offsets', async () => {
      expect(await expectInvalid('\ufeff{"a":1,}', 1)).toBe(`${NOT_JSON}Unexpected token '}' at byte 10`);
    });
  });

  describe('limits', () => {
    const limit = 'The request body is larger than the 100 bytes this endpoint accepts.';

    it('refuses a declared content-length above maxBytes without reading', async () => {
      const probe = { pulled: 0, cancelled: false };
      const error = await splitJsonBody(streamOf('{}', 1, probe), 101, { ...OPTIONS, maxBytes: 100 }, () => undefined).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(413);
      expect((error as ApiError).name).toBe('PayloadTooLargeError');
      expect((error as ApiError).message).toBe(limit);
      expect(probe.pulled).toBe(0);
    });

    it.each([1, 64 * 1024])('refuses more bytes than maxBytes while reading, whatever was declared (chunks of %i bytes)', async (size) => {
      const body = `{"data":{"f":[${'1,'.repeat(60)}1]}}`;
      const probe = { pulled: 0, cancelled: false };
      const error = await splitJsonBody(streamOf(body, size, probe), null, { ...OPTIONS, maxBytes: 100 }, () => undefined).catch(
        (e: unknown) => e,
      );
      expect((error as ApiError).status).toBe(413);
      expect((error as ApiError).message).toBe(limit);
      if (size === 1) {
        expect(probe.pulled).toBe(101);
        expect(probe.cancelled).toBe(true);
      }
    });

    it('accepts a body of exactly maxBytes', async () => {
      const body = `{"a":"${'x'.repeat(92)}"}`;
      expect(body.length).toBe(100);
      const { result } = await run(body, 1, { maxBytes: 100 });
      expect(result.bytes).toBe(100);
    });

    it.each([1, 7, 64 * 1024])('refuses a value above maxValueBytes naming its path (chunks of %i bytes)', async (size) => {
      const big = JSON.stringify({ s: 'x'.repeat(60) });
      const cases: [string, string][] = [
        [`{"data":{"features":[1,${big}]}}`, '/body/data/features/1'],
        [`{"project":${big}}`, '/body/project'],
        [`{"data":{"meta":${big}}}`, '/body/data/meta'],
        [`{"data":{"f":["${'y'.repeat(60)}"]}}`, '/body/data/f/0'],
        [`{"data":{"f":[${'9'.repeat(60)}]}}`, '/body/data/f/0'],
      ];
      for (const [body, path] of cases) {
        const error = await failure(body, size, { maxValueBytes: 50 });
        expect(error.status, body).toBe(413);
        expect(error.name).toBe('PayloadTooLargeError');
        expect(error.message).toBe(
          `The value at \`${path}\` in the request body is larger than the 50 bytes this endpoint accepts for one value.`,
        );
      }
    });

    it('accepts a value of exactly maxValueBytes', async () => {
      const item = `"${'z'.repeat(48)}"`;
      const { items } = await run(`{"data":{"f":[${item}]}}`, 1, { maxValueBytes: 50 });
      expect(items).toEqual([['f', 0, 'z'.repeat(48)]]);
    });
  });

  describe('duplicate keys', () => {
    it.each([
      ['{"a":1,"a":2}', '/body/a'],
      ['{"a":1,"\\u0061":2}', '/body/a'],
      ['{"data":{},"data":{}}', '/body/data'],
      ['{"data":[],"data":{"f":[]}}', '/body/data'],
      ['{"data":{"f":[],"f":[1]}}', '/body/data/f'],
      ['{"data":{"f":1,"g":2,"f":[1]}}', '/body/data/f'],
      ['{"data":{"f":[1],"f":2}}', '/body/data/f'],
    ])('refuses %s', async (body, path) => {
      const error = await failure(body, 1);
      expect(error.status).toBe(400);
      expect(error.name).toBe('ValidationError');
      expect(error.details).toEqual([{ path, message: `The request body has the key \`${path}\` more than once.` }]);
    });

    it('leaves duplicates inside items and kept values to JSON.parse (last wins)', async () => {
      const { result, items } = await run('{"a":{"x":1,"x":2},"data":{"f":[{"y":1,"y":3}]}}');
      expect(result.top.get('a')).toEqual({ x: 2 });
      expect(items).toEqual([['f', 0, { y: 3 }]]);
    });
  });

  describe('the item callback', () => {
    it('is awaited: items are processed one at a time, in order, and reading waits', async () => {
      const body = `{"data":{"f":[${Array.from({ length: 20 }, (_, i) => JSON.stringify({ i })).join(',')}],"g":[{"i":20}]}}`;
      const probe = { pulled: 0, cancelled: false };
      const log: string[] = [];
      let running = 0;
      const onItem: OnItem = async (key, index, value) => {
        expect(running).toBe(0);
        running++;
        const pulledAtStart = probe.pulled;
        log.push(`start ${key}/${index}/${(value as { i: number }).i}`);
        await new Promise((resolve) => setTimeout(resolve, 1));
        await Promise.resolve();
        // Backpressure: nothing more was read while this item was being handled.
        expect(probe.pulled).toBe(pulledAtStart);
        log.push(`end ${key}/${index}`);
        running--;
      };
      await splitJsonBody(streamOf(body, 1, probe), null, OPTIONS, onItem);
      const expected: string[] = [];
      for (let i = 0; i < 20; i++) expected.push(`start f/${i}/${i}`, `end f/${i}`);
      expected.push('start g/0/20', 'end g/0');
      expect(log).toEqual(expected);
    });

    it('stops reading and cancels the stream when it throws', async () => {
      const probe = { pulled: 0, cancelled: false };
      const error = await splitJsonBody(streamOf('{"data":{"f":[1,2,3,4,5,6,7,8,9]}}', 1, probe), null, OPTIONS, (_, index) => {
        if (index === 2) throw new Error('stop');
      }).catch((e: unknown) => e);
      expect((error as Error).message).toBe('stop');
      expect(probe.cancelled).toBe(true);
      expect(probe.pulled).toBeLessThan(22);
    });

    it('gets items before a later syntax error is seen', async () => {
      const seen: number[] = [];
      const error = await splitJsonBody(
        streamOf('{"data":{"f":[1,2,3 4]}}', 64, { pulled: 0, cancelled: false }),
        null,
        OPTIONS,
        (_, __, value) => {
          seen.push(value as number);
        },
      ).catch((e: unknown) => e);
      expect((error as ApiError).status).toBe(400);
      expect(seen).toEqual([1, 2, 3]);
    });
  });

  describe('randomized round trip', () => {
    // Deterministic, so a failure can be replayed.
    let seed = 12345;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
    const ws = (): string => (random() < 0.7 ? '' : pick([' ', '\n', '\t', '\r\n', '  \t ']));
    const ATOMS = ['a', 'é', '😀', '"', '\\', ']', '[', '{', '}', ',', ':', ' ', '\n', '\u0001', '\u2028', '/', 'x"]}'];

    function randomString(): string {
      let out = '';
      const length = Math.floor(random() * 8);
      for (let i = 0; i < length; i++) out += pick(ATOMS);
      return out;
    }

    /** JSON text for a string, sometimes spelled with needless \u escapes. */
    function stringText(value: string): string {
      if (random() < 0.8) return JSON.stringify(value);
      return `"${[...value].map((ch) => (ch.length === 1 ? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}` : JSON.stringify(ch).slice(1, -1))).join('')}"`;
    }

    function valueText(depth: number): string {
      const roll = random();
      if (depth > 3 || roll < 0.35) {
        return pick([
          () => stringText(randomString()),
          () => String(Math.floor(random() * 2000) - 1000),
          () => String(random() * 1e6),
          () => '-0.5e-3',
          () => 'true',
          () => 'false',
          () => 'null',
          () => '1E+2',
        ])();
      }
      if (roll < 0.65) {
        const length = Math.floor(random() * 4);
        return `[${ws()}${Array.from({ length }, () => `${ws()}${valueText(depth + 1)}${ws()}`).join(',')}${ws()}]`;
      }
      return objectText(depth + 1, () => valueText(depth + 1));
    }

    function uniqueKeys(count: number): string[] {
      const keys = new Set<string>();
      while (keys.size < count) keys.add(randomString() + String(keys.size));
      return [...keys];
    }

    function objectText(_depth: number, value: () => string): string {
      const keys = uniqueKeys(Math.floor(random() * 4));
      return `{${ws()}${keys.map((key) => `${ws()}${stringText(key)}${ws()}:${ws()}${value()}${ws()}`).join(',')}${ws()}}`;
    }

    function documentText(): string {
      if (random() < 0.05) return `${ws()}${valueText(0)}${ws()}`;
      const splitValue = (): string => {
        if (random() < 0.1) return valueText(1);
        const keys = uniqueKeys(Math.floor(random() * 5));
        const entries = keys.map((key) => {
          const arrayValue = random() < 0.75;
          const items = Array.from({ length: Math.floor(random() * 6) }, () => `${ws()}${valueText(1)}${ws()}`);
          return `${ws()}${stringText(key)}${ws()}:${ws()}${arrayValue ? `[${ws()}${items.join(',')}${ws()}]` : valueText(1)}${ws()}`;
        });
        return `{${ws()}${entries.join(',')}${ws()}}`;
      };
      const tops = uniqueKeys(Math.floor(random() * 4)).filter((key) => key !== 'data');
      const parts = tops.map((key) => `${ws()}${stringText(key)}${ws()}:${ws()}${valueText(0)}${ws()}`);
      if (random() < 0.9) parts.splice(Math.floor(random() * (parts.length + 1)), 0, `${ws()}"data"${ws()}:${ws()}${splitValue()}${ws()}`);
      return `${random() < 0.1 ? '\ufeff' : ''}${ws()}{${parts.join(',')}}${ws()}`;
    }

    it('reassembles 400 random documents to what JSON.parse gives', async () => {
      for (let n = 0; n < 400; n++) {
        const text = documentText();
        const sizes = pick<ChunkSizes>([
          1,
          2,
          3,
          7,
          64,
          64 * 1024,
          () => 1 + Math.floor(random() * 16),
          () => 1 + Math.floor(random() * 300),
        ]);
        const expected: unknown = JSON.parse(text.replace(/^\ufeff/, ''));
        const outcome = await run(text, sizes);
        expect(reassemble(outcome), text).toEqual(expected);
      }
    });

    it('refuses every random document cut short', async () => {
      for (let n = 0; n < 150; n++) {
        const text = documentText()
          .replace(/^\ufeff/, '')
          .trimEnd();
        const cut = text.slice(0, Math.floor(random() * text.length));
        let parses = true;
        try {
          JSON.parse(cut);
        } catch {
          parses = false;
        }
        if (parses) continue;
        const error = await failure(cut, pick([1, 5, 64 * 1024]));
        expect(error.status, cut).toBe(400);
      }
    });
  });
});
