import { describe, expect, it } from 'vitest';
import { redactUrl, unredactUrl } from '../../src/shared/redact-url.js';

describe('redactUrl', () => {
  it('replaces the password of a URL and leaves the rest as given', () => {
    expect(redactUrl('https://user:s3cret@collector.example.com:8443/v1/traces?x=1')).toBe('https://user:***@collector.example.com:8443/v1/traces?x=1');
    expect(redactUrl('redis://:s3cret@127.0.0.1:6379/0')).toBe('redis://:***@127.0.0.1:6379/0');
    expect(redactUrl('https://collector.example.com/v1/traces')).toBe('https://collector.example.com/v1/traces');
    expect(redactUrl('not a url')).toBe('not a url');
  });

  it('replaces a user name given without a password: a token in the userinfo', () => {
    expect(redactUrl('https://ghp_abc123@collector.example.com/v1/traces')).toBe('https://***@collector.example.com/v1/traces');
  });

  it('replaces the values of query parameters named for credentials, and nothing else of the query', () => {
    expect(redactUrl('https://collector.example.com/v1/traces?api_key=s3cret&region=eu')).toBe('https://collector.example.com/v1/traces?api_key=***&region=eu');
    expect(redactUrl('https://c.example.com/t?DD-API-KEY=s3cret')).toBe('https://c.example.com/t?DD-API-KEY=***');
    expect(redactUrl('https://c.example.com/t?token=a&access_token=b&X-Amz-Signature=c&sig=d&key=e&auth=f')).toBe('https://c.example.com/t?token=***&access_token=***&X-Amz-Signature=***&sig=***&key=***&auth=***');
    expect(redactUrl('https://c.example.com/t?monkey=1&keyword=2&tokens=3&x=&api_key')).toBe('https://c.example.com/t?monkey=1&keyword=2&tokens=3&x=&api_key');
    expect(redactUrl('https://user:pw@c.example.com/t?a=1&secret=2#frag')).toBe('https://user:***@c.example.com/t?a=1&secret=***#frag');
  });

  it('reads a redacted URL sent back as the stored one, and any other URL as given', () => {
    const stored = 'https://user:s3cret@collector.example.com/v1/traces';
    expect(unredactUrl('https://user:***@collector.example.com/v1/traces', stored)).toEqual({ url: stored });
    expect(unredactUrl('https://user:other@collector.example.com/v1/traces', stored)).toEqual({ url: 'https://user:other@collector.example.com/v1/traces' });
    expect(unredactUrl('https://other.example.com/v1/traces', stored)).toEqual({ url: 'https://other.example.com/v1/traces' });
    const withToken = 'https://collector.example.com/v1/traces?token=s3cret&team=a';
    expect(unredactUrl(redactUrl(withToken), withToken)).toEqual({ url: withToken });
    expect(unredactUrl('https://collector.example.com/v1/traces?token=other&team=a', withToken)).toEqual({ url: 'https://collector.example.com/v1/traces?token=other&team=a' });
  });

  it('puts stored credentials back under a redacted URL whose other parts were edited, on the same origin only', () => {
    const stored = 'https://u:real%40pw@a.example/v1/traces?token=T0K&team=a';
    expect(unredactUrl('https://u:***@a.example/v2/traces?token=***&team=b', stored)).toEqual({ url: 'https://u:real%40pw@a.example/v2/traces?token=T0K&team=b' });
    expect(unredactUrl('https://***@a.example/v2', 'https://tok3n@a.example/v1')).toEqual({ url: 'https://tok3n@a.example/v2' });
    const moved = unredactUrl('https://u:***@b.example/v1/traces?token=***', stored);
    expect(moved).toEqual({ problem: expect.stringContaining('not carried to another origin (https://b.example)') });
    expect(unredactUrl('https://a.example/v1/traces?api_key=***', stored)).toEqual({ problem: expect.stringContaining('api_key') });
    expect(unredactUrl('https://x:***@a.example/v1/traces', 'https://a.example/v1/traces')).toEqual({ problem: expect.stringContaining('password') });
  });
});
