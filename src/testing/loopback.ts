/**
 * Whether an address the emulator listens on is reachable only from this machine. Anything else
 * (`0.0.0.0`, `::`, a LAN address) serves the demo credentials to the network.
 */
export function isLoopbackAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').toLowerCase();
  return /^127(\.\d{1,3}){3}$/.test(bare) || /^::ffff:127(\.\d{1,3}){3}$/.test(bare) || bare === '::1';
}

/** The warning printed when the emulator listens beyond loopback. */
export function exposedWarning(url: string): string {
  return (
    `push-api emulator: listening on ${url}, which is reachable from the network; anyone who can ` +
    'reach it can obtain tokens with the published demo credentials and read what it received. ' +
    'Listen on 127.0.0.1 unless other machines must connect.'
  );
}
