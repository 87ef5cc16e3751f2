import { describe, expect, it } from 'vitest';
import { closerThanService, isLoopbackHostname, isSecureUrl, networkScope } from '../../src/http/fetch.js';

const scopeOf = (host: string) => networkScope(new URL(`http://${host}:81/x`));

describe('networkScope', () => {
  it.each([
    '127.0.0.1',
    '127.1',
    '127.255.255.254',
    '2130706433',
    '0x7f000001',
    '0177.0.0.1',
    '0x7f.1',
    '127.0.0.1.',
    '%31%32%37.0.0.1',
    '0x7f.0x0.0x0.0x1',
    '127.000.000.001',
    '\uff11\uff12\uff17.\uff10.\uff10.\uff11',
    '127\u30020\u30020\u30021',
    '\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54',
    'loc\u00adal\u200bhost',
    'LOCALHOST\u3002',
    'LOCALHOST',
    'localhost.',
    'localhost..',
    'LocalHost.LocalDomain',
    'ip6-localhost',
    'ip6-loopback',
    'localhost4',
    'localhost4.localdomain4',
    'LOCALHOST6',
    'localhost6.localdomain6.',
    'files.localhost',
    'files.localhost.',
    '0.0.0.0',
    '0',
    '[::1]',
    '[0:0:0:0:0:0:0:1]',
    '[::]',
    '[::ffff:127.0.0.1]',
    '[::ffff:7f00:1]',
    '[::127.0.0.1]',
    '[::ffff:0:127.0.0.1]',
    '[64:ff9b::127.0.0.1]',
    '[2002:7f00:1::]',
  ])('%s is this machine', (host) => {
    expect(scopeOf(host)).toBe('loopback');
  });

  it.each([
    '10.0.0.1',
    '012.0.0.1',
    '0xa000001',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '2852039166',
    '100.64.0.1',
    '100.127.255.255',
    '192.0.0.1',
    '198.18.0.1',
    '224.0.0.1',
    '255.255.255.255',
    '[fe80::1]',
    '[FEBF::1]',
    '[fec0::1]',
    '[fc00::1]',
    '[fd12:3456::1]',
    '[ff02::1]',
    '[::ffff:10.0.0.1]',
    '[::ffff:169.254.169.254]',
    '[64:ff9b::10.0.0.1]',
    '[64:ff9b:1::1]',
    '[2002:c0a8:101::1]',
    '[2001:0:4136:e378:8000:63bf:f5ff:fffe]',
  ])('%s is a private network', (host) => {
    expect(scopeOf(host)).toBe('private');
  });

  it.each([
    'api.push.test',
    '8.8.8.8',
    '172.32.0.1',
    '100.128.0.1',
    '11.0.0.1',
    '[2001:db8::1]',
    '[2606:4700::1111]',
    '[::ffff:8.8.8.8]',
    '[64:ff9b::8.8.8.8]',
    'localhost.example',
    '127.0.0.1.nip.io',
  ])('%s is public (as far as its address says)', (host) => {
    expect(scopeOf(host)).toBe('public');
  });
});

describe('isLoopbackHostname (the plain-http allowance)', () => {
  it.each(['127.0.0.1', '127.1', '127.0.0.2', 'localhost', 'LOCALHOST', 'localhost.', '[::1]', '[::ffff:127.0.0.1]'])(
    'allows plain http to %s',
    (host) => {
      expect(isLoopbackHostname(new URL(`http://${host}/`).hostname)).toBe(true);
      expect(isSecureUrl(new URL(`http://${host}/`))).toBe(true);
    },
  );

  it.each(['0.0.0.0', '[::]', 'files.localhost', '10.0.0.1', 'localhost.evil.test', '127.0.0.1.nip.io'])(
    'does not allow plain http to %s',
    (host) => {
      expect(isSecureUrl(new URL(`http://${host}/`))).toBe(false);
    },
  );
});

describe('closerThanService', () => {
  const remote = new URL('https://api.push.test');
  const internal = new URL('https://10.0.0.5');
  const local = new URL('http://127.0.0.1:4010');

  it('refuses a hop closer than the service, and names where', () => {
    expect(closerThanService(new URL('http://127.1:9/'), remote)).toMatch(/this machine \(loopback\).*api\.push\.test/);
    expect(closerThanService(new URL('https://192.168.0.1/'), remote)).toMatch(/a private network/);
    expect(closerThanService(new URL('https://127.0.0.1/'), internal)).toMatch(/this machine/);
  });

  it('allows a hop as close as the service or farther', () => {
    expect(closerThanService(new URL('https://10.9.9.9/'), internal)).toBeUndefined();
    expect(closerThanService(new URL('http://localhost:9/'), local)).toBeUndefined();
    expect(closerThanService(new URL('https://cdn.example/'), local)).toBeUndefined();
    expect(closerThanService(new URL('https://files.example/'), remote)).toBeUndefined();
  });
});
