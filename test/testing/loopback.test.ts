import { startEmulator } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { exposedWarning, isLoopbackAddress } from '../../src/testing/loopback.js';

describe('listening beyond loopback', () => {
  it.each(['127.0.0.1', '127.3.2.1', '::1', '[::1]', '::ffff:127.0.0.1'])('treats %s as loopback', (address) => {
    expect(isLoopbackAddress(address)).toBe(true);
  });

  it.each(['0.0.0.0', '::', '192.168.1.20', '10.0.0.1', '::ffff:10.0.0.1', '128.0.0.1', 'fe80::1'])(
    'treats %s as reachable from the network',
    (address) => {
      expect(isLoopbackAddress(address)).toBe(false);
    },
  );

  it('names the address and the demo credentials in the warning', () => {
    expect(exposedWarning('http://0.0.0.0:4010')).toMatch(/0\.0\.0\.0:4010.*network.*demo credentials/);
  });

  it('emits no warning for localhost', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const emulator = await startEmulator({ host: 'localhost' });
      await emulator.close();
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((warning) => warning.message.includes('push-api emulator'))).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('warns that the demo credentials are reachable when it listens on every interface', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const emulator = await startEmulator({ host: '0.0.0.0' });
      await emulator.close();
      await new Promise((resolve) => setImmediate(resolve));
      const exposed = warnings.filter((warning) => warning.message.includes('push-api emulator'));
      expect(exposed).toHaveLength(1);
      expect(exposed[0]?.name).toBe('SecurityWarning');
      expect(exposed[0]?.message).toMatch(/0\.0\.0\.0:\d+.*network.*demo credentials/);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
