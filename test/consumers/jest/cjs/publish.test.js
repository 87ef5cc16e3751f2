const { PushClient, TokenError } = require('push-api-client');

const record = {
  created: '2025-01-31',
  amount: 42,
  currency: 'USD',
  identifier: 'ada@example.com',
  type: 'expense',
  vendor: 'Acme',
};

test('publishes records to the emulator started in globalSetup', async () => {
  const client = new PushClient(); // the PUSH_* variables set by globalSetup
  const report = await client.finance.publish(process.env.PUSH_APP_ID, [record, { ...record, amount: 7 }]);
  expect(report.recordsSent).toBe(2);
  expect(report.recordsFailed).toBe(0);
});

test('a wrong secret is a TokenError with the OAuth code', async () => {
  const client = new PushClient({ clientSecret: 'not-the-secret' });
  await expect(client.tokens.getToken()).rejects.toBeInstanceOf(TokenError);
  await expect(client.tokens.getToken()).rejects.toMatchObject({ error: 'invalid_client' });
});
