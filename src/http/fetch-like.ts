/** The fetch signature the transport needs; `globalThis.fetch`, undici's and most polyfills fit. */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
