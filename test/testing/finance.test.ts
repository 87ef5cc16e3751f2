import { createPushApiHandler, MAX_RECORDS_PER_REQUEST } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { financeRequest, getToken, specError } from '../support/emulator-requests.js';
import { financeRecord } from '../support/records.js';

async function setup(options: Parameters<typeof createPushApiHandler>[0] = {}) {
  const emulator = createPushApiHandler(options);
  const token = await getToken(emulator);
  const post = (body: unknown, extra: Parameters<typeof financeRequest>[3] = {}) =>
    emulator.handle(financeRequest(emulator, token, body, extra));
  return { emulator, token, post };
}

async function expect422(response: Response, ...fragments: string[]) {
  expect(response.status).toBe(422);
  const { message } = await specError(response);
  for (const fragment of fragments) expect(message).toContain(fragment);
}

describe('finance publishing', () => {
  it('stores valid records for the app and answers {success: true}', async () => {
    const { emulator, post } = await setup();
    const records = [
      financeRecord(),
      financeRecord(0, { type: 'invoice', name: 'n', category: 'a:b', description: 'd', transactionNumber: 'T-1' }),
    ];
    const response = await post({ records });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ success: true });
    expect(emulator.state.records(emulator.appId)).toEqual(records);
    expect(emulator.state.recordCount(emulator.appId)).toBe(2);
  });

  it('keeps records in arrival order and knows which request delivered each', async () => {
    const { emulator, post } = await setup();
    const first = await post({
      records: [financeRecord(0, { identifier: 'a' }), financeRecord(0, { identifier: 'b' })],
    });
    const second = await post({ records: [financeRecord(0, { identifier: 'c' })] });
    expect(emulator.state.records(emulator.appId).map((record) => record.identifier)).toEqual(['a', 'b', 'c']);
    const deliveries = emulator.state.deliveries(emulator.appId);
    expect(deliveries.map((delivery) => [delivery.requestId, delivery.firstIndex, delivery.count])).toEqual([
      [first.headers.get('x-request-id'), 0, 2],
      [second.headers.get('x-request-id'), 2, 1],
    ]);
    expect(deliveries[1]?.records).toEqual([financeRecord(0, { identifier: 'c' })]);
    expect(emulator.state.deliveryOf(emulator.appId, 1)).toBe(first.headers.get('x-request-id'));
    expect(emulator.state.deliveryOf(emulator.appId, 2)).toBe(second.headers.get('x-request-id'));
    expect(emulator.state.deliveryOf(emulator.appId, 3)).toBeUndefined();
  });

  it('accepts exactly 1000 records and refuses 1001 with 422', async () => {
    const { emulator, post } = await setup();
    const records = Array.from({ length: MAX_RECORDS_PER_REQUEST }, () => financeRecord());
    expect((await post({ records })).status).toBe(200);
    await expect422(await post({ records: [...records, financeRecord()] }), 'records', '1001');
    expect(emulator.state.recordCount(emulator.appId)).toBe(1000);
  });

  it('accepts an empty records array and stores nothing', async () => {
    const { emulator, post } = await setup();
    expect((await post({ records: [] })).status).toBe(200);
    expect(emulator.state.recordCount(emulator.appId)).toBe(0);
  });

  it.each([
    ['a missing required field', { vendor: undefined }, 'records[1].vendor is required'],
    ['created as a string', { created: '2024-01-01' }, 'records[1].created must be a number'],
    ['created with a fraction', { created: 1.5 }, 'records[1].created'],
    ['amount as a string', { amount: '12.50' }, 'records[1].amount must be a number'],
    ['currency in lower case', { currency: 'eur' }, 'records[1].currency'],
    ['currency too long', { currency: 'EURO' }, 'records[1].currency'],
    ['type outside expense/invoice', { type: 'refund' }, 'records[1].type'],
    ['an unknown property', { extra: 1 }, 'records[1].extra is not a known property'],
    ['merchant, which only the schematic names', { merchant: 'Acme' }, 'records[1].merchant is not a known property'],
    ['an optional field of the wrong type', { description: 5 }, 'records[1].description must be a string'],
    ['null in an optional field', { name: null }, 'records[1].name must be a string'],
    ['an empty required string', { identifier: '' }, 'records[1].identifier must not be empty'],
  ])('refuses %s with a 422 naming the record and field, storing nothing', async (_, overrides, fragment) => {
    const { emulator, post } = await setup();
    const bad = financeRecord(0, overrides);
    for (const [key, value] of Object.entries(overrides)) if (value === undefined) delete (bad as never)[key];
    await expect422(await post({ records: [financeRecord(), bad] }), fragment);
    expect(emulator.state.recordCount()).toBe(0);
  });

  it('refuses an amount that JSON turns into Infinity', async () => {
    const { post } = await setup();
    const raw = JSON.stringify({ records: [financeRecord()] }).replace('"amount":0.25', '"amount":1e999');
    await expect422(await post(undefined, { raw }), 'records[0].amount must be finite');
  });

  it('refuses a record that is not an object', async () => {
    const { post } = await setup();
    await expect422(await post({ records: [financeRecord(), 'text', null, []] }), 'records[1] must be an object');
  });

  it('refuses bodies without a records array', async () => {
    const { post } = await setup();
    await expect422(await post({}), 'records is required');
    await expect422(await post({ records: {} }), 'records must be an array');
    await expect422(await post([financeRecord()]), 'JSON object');
    await expect422(await post({ records: [], extra: true }), 'extra');
  });

  it('refuses malformed JSON, invalid UTF-8 and a non-JSON content type with 422', async () => {
    const { post } = await setup();
    await expect422(await post(undefined, { raw: '{"records": [' }), 'not valid JSON');
    await expect422(await post(undefined, { raw: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]) }), 'UTF-8');
    await expect422(await post({ records: [] }, { headers: { 'content-type': 'text/plain' } }), 'application/json');
  });

  it('accepts a JSON content type with a charset', async () => {
    const { post } = await setup();
    const response = await post(
      { records: [financeRecord()] },
      { headers: { 'content-type': 'application/json; charset=utf-8' } },
    );
    expect(response.status).toBe(200);
  });

  it('answers 400 to any query parameter on the finance operation', async () => {
    const { emulator, token } = await setup();
    const request = financeRequest(emulator, token, { records: [financeRecord()] });
    const response = await emulator.handle(new Request(`${request.url}?dryRun=true`, request));
    expect(response.status).toBe(400);
    expect((await specError(response)).message).toContain('dryRun');
  });

  it('answers 413 to a body over maxBodyBytes, declared or not', async () => {
    const { post } = await setup({ maxBodyBytes: 1000 });
    const records = Array.from({ length: 20 }, () => financeRecord());
    const declared = await post({ records }, { headers: { 'content-length': '5000' } });
    expect(declared.status).toBe(413);
    await specError(declared);
    const streamed = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(JSON.stringify({ records })));
        controller.close();
      },
    });
    const response = await post(undefined, { raw: streamed });
    expect(response.status).toBe(413);
  });

  it('stops reading a huge streamed body at the limit instead of buffering it', async () => {
    const { post } = await setup({ maxBodyBytes: 64 * 1024 });
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1;
        controller.enqueue(new Uint8Array(16 * 1024).fill(0x20));
      },
    });
    const response = await post(undefined, { raw: endless });
    expect(response.status).toBe(413);
    expect(pulled).toBeLessThan(20);
  });

  it('with keepRecords false counts records without keeping them', async () => {
    const { emulator, post } = await setup({ keepRecords: false });
    await post({ records: [financeRecord(), financeRecord()] });
    expect(emulator.state.recordCount(emulator.appId)).toBe(2);
    expect(emulator.state.records(emulator.appId)).toEqual([]);
  });
});
