/** Workers and edge runtimes have no `node:crypto`: the store key's SHA-256 comes from WebCrypto. */
export async function sha256Hex(material: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(material));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('');
}
