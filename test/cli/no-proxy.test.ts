import { describe, expect, it } from 'vitest';
import { parseNoProxy } from '../../src/cli/no-proxy.js';

const direct = (noProxy: string, url: string) => parseNoProxy(noProxy).bypasses(new URL(url));

describe('NO_PROXY, read as curl, Go and Python read it', () => {
  it.each([
    ['api.example.com', 'https://api.example.com/x'],
    ['example.com', 'https://api.example.com/x'],
    ['.example.com', 'https://example.com/x'],
    ['*.example.com', 'https://api.example.com/x'],
    ['EXAMPLE.com', 'https://api.example.COM/x'],
    ['example.com.', 'https://api.example.com./x'],
    ['example.com:443', 'https://api.example.com/x'],
    ['localhost:4010', 'http://localhost:4010/'],
    ['127.0.0.1', 'http://127.0.0.1:4010/'],
    ['127.0.0.1:4010', 'http://127.0.0.1:4010/'],
    ['127.0.0.0/8', 'http://127.1.2.3:4010/'],
    ['10.0.0.0/8,192.168.0.0/16', 'https://192.168.7.1/'],
    ['::1', 'http://[::1]:4010/'],
    ['[::1]', 'http://[::1]:4010/'],
    ['[::1]:4010', 'http://[::1]:4010/'],
    ['0:0:0:0:0:0:0:1', 'http://[::1]:4010/'],
    ['fd00::/8', 'http://[fd12::5]/'],
    ['*', 'https://anything.example/'],
    ['a.example, *', 'https://anything.example/'],
    ['  a.example\tb.example ', 'https://b.example/'],
    ['bücher.example', 'https://bücher.example/'],
    ['.BÜCHER.example', 'https://www.xn--bcher-kva.example/'],
    ['xn--bcher-kva.example', 'https://bücher.example/'],
  ])('%j sends %s direct', (noProxy, url) => {
    expect(direct(noProxy, url)).toBe(true);
  });

  it.each([
    ['', 'https://api.example.com/'],
    ['example.com', 'https://badexample.com/'],
    ['example.com:8443', 'https://api.example.com/'],
    ['localhost:1', 'http://localhost:4010/'],
    ['127.0.0.0/8', 'http://localhost:4010/'],
    ['10.0.0.0/8', 'http://11.0.0.1/'],
    ['::1', 'http://127.0.0.1/'],
    ['127.0.0.1/33', 'http://127.0.0.1/'],
    ['*.', 'https://api.example.com/'],
    ['a*b', 'https://api.example.com/'],
  ])('%j sends %s through the proxy', (noProxy, url) => {
    expect(direct(noProxy, url)).toBe(false);
  });
});
