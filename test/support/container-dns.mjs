/**
 * Preloaded into a CLI process (`node --import`) by the container tests: resolves the one name in
 * PUSH_TEST_CONTAINER_HOST (`name=address`) as a docker-compose network would, and refuses every
 * other name, so the process can reach nothing beyond this machine. Only name resolution changes;
 * the CLI's own code runs as shipped.
 */
import dns from 'node:dns';

const [name, address] = (process.env.PUSH_TEST_CONTAINER_HOST ?? '').split('=');
const original = dns.lookup;

dns.lookup = function lookup(hostname, options, callback) {
  const done = typeof options === 'function' ? options : callback;
  const opts = typeof options === 'object' && options !== null ? options : {};
  if (hostname === name && address) {
    if (opts.all) return process.nextTick(done, null, [{ address, family: 4 }]);
    return process.nextTick(done, null, address, 4);
  }
  if (hostname === 'localhost' || /^127\./.test(hostname) || hostname === '::1') {
    return original.call(dns, hostname, options, callback);
  }
  const error = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
  return process.nextTick(done, error);
};
