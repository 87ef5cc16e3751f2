import { afterEach, describe, expect, it, vi } from 'vitest';
import { runtimeProduct } from '../../src/runtime.js';

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('the runtime named in the User-Agent', () => {
  it('is node/<version> on Node', () => {
    expect(runtimeProduct()).toBe(`node/${process.versions.node}`);
  });

  it('is bun/<version> on Bun, which also sets process.versions.node', () => {
    vi.stubGlobal('Bun', { version: '1.4.5' });
    expect(runtimeProduct()).toBe('bun/1.4.5');
  });

  it('is deno/<version> on Deno, which also sets process.versions.node', () => {
    vi.stubGlobal('Deno', { version: { deno: '2.9.6' } });
    expect(runtimeProduct()).toBe('deno/2.9.6');
  });

  it('is workerd on Cloudflare Workers and edge on edge-runtime, which have no version of their own', () => {
    vi.stubGlobal('navigator', { userAgent: 'Cloudflare-Workers' });
    expect(runtimeProduct()).toBe('workerd');
    vi.stubGlobal('EdgeRuntime', 'edge-runtime');
    expect(runtimeProduct()).toBe('edge');
  });
});
