/**
 * The HTTP flags of serve and proxy: `--listen` forms and the loopback default, flags that need
 * `--listen`, ranges, and the allow-lists built from them.
 */
import { describe, expect, it } from 'vitest';
import { parseListen, parseListenArgs } from '../../src/cli/listen-args.js';
import { buildAllowLists, hostName, isLoopbackHost, isWildcardHost } from '../../src/transport/http/request-gate.js';

describe('listen-args', () => {
  it('a bare port binds loopback; a host is taken only when named', () => {
    expect(parseListen('8080')).toEqual({ host: '127.0.0.1', port: 8080, hostGiven: false });
    expect(parseListen('0.0.0.0:0')).toEqual({ host: '0.0.0.0', port: 0, hostGiven: true });
    expect(parseListen('[::1]:9')).toEqual({ host: '::1', port: 9, hostGiven: true });
    expect(() => parseListen('::1:9')).toThrow(/IPv6 in brackets/);
    expect(() => parseListen('70000')).toThrow(/0 to 65535/);
    expect(() => parseListen(':80')).toThrow(/\[HOST:\]PORT/);
  });

  it('takes its flags out and leaves the rest in order, stopping at --', () => {
    const { args, rest } = parseListenArgs(['--root', 'x', '--listen=127.0.0.1:0', '--stateless', '--json-response', '--max-request-bytes', '1MiB', '--allow-host', 'mcp.example', '--', '--listen', '1'], 'serve');
    expect(rest).toEqual(['--root', 'x', '--', '--listen', '1']);
    expect(args).toMatchObject({ listen: { host: '127.0.0.1', port: 0 }, stateless: true, jsonResponse: true, maxRequestBytes: 1024 * 1024, allowHosts: ['mcp.example'] });
  });

  it('refuses HTTP flags without --listen, and flags of the other command', () => {
    expect(() => parseListenArgs(['--stateless'], 'serve')).toThrow(/needs `--listen/);
    expect(() => parseListenArgs(['--token-file', 'f'], 'proxy')).toThrow(/needs `--listen/);
    expect(() => parseListenArgs(['--listen', '0', '--stateless'], 'proxy')).toThrow(/serve flag/);
    expect(() => parseListenArgs(['--upstream-url', 'http://x/mcp'], 'serve')).toThrow(/proxy flag/);
    expect(() => parseListenArgs(['--upstream-url', 'file:///etc/passwd'], 'proxy')).toThrow(/http\(s\) URL/);
    expect(() => parseListenArgs(['--listen', '0', '--allow-origin', 'evil.example'], 'serve')).toThrow(/origin like/);
    expect(() => parseListenArgs(['--listen', '0', '--session-idle-ms', '5'], 'serve')).toThrow(/from 100/);
    expect(parseListenArgs(['--upstream-url', 'http://127.0.0.1:1/mcp'], 'proxy').args.upstreamUrl?.port).toBe('1');
  });
});

describe('request-gate allow-lists', () => {
  it('loopback names and the bound port by default; a wildcard bind adds no name', () => {
    const lists = buildAllowLists('127.0.0.1', 4000, [], []);
    expect([...lists.hosts].sort()).toEqual(['127.0.0.1', '[::1]', 'localhost']);
    expect(lists.origins.has('http://localhost:4000')).toBe(true);
    expect(lists.origins.has('http://localhost:4001')).toBe(false);
    const wide = buildAllowLists('0.0.0.0', 4000, ['MCP.example.com:443'], ['https://app.example.com/']);
    expect(wide.hosts.has('0.0.0.0')).toBe(false);
    expect(wide.hosts.has('mcp.example.com')).toBe(true);
    expect(wide.origins.has('https://app.example.com')).toBe(true);
  });

  it('names', () => {
    expect(hostName('[::1]:8080')).toBe('[::1]');
    expect(hostName('Evil.Example:80')).toBe('evil.example');
    expect(isLoopbackHost('127.0.0.2')).toBe(true);
    expect(isLoopbackHost('[::1]')).toBe(true);
    expect(isLoopbackHost('10.0.0.1')).toBe(false);
    expect(isWildcardHost('::')).toBe(true);
  });
});
