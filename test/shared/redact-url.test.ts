import { describe, expect, it } from 'vitest';
import { redactUrl, unredactUrl } from '../../src/shared/redact-url.js';

describe('redactUrl', () => {
  it('replaces the password of a URL and leaves the rest as given', () => {
    expect(redactUrl('https://user:s3cret@collector.example.com:8443/v1/traces?x=1')).toBe('https://user:***@collector.example.com:8443/v1/traces?x=1');
    expect(redactUrl('redis://:s3cret@127.0.0.1:6379/0')).toBe('redis://:***@127.0.0.1:6379/0');
    expect(redactUrl('https://collector.example.com/v1/traces')).toBe('https://collector.example.com/v1/traces');
    expect(redactUrl('not a url')).toBe('not a url');
  });

  it('reads a redacted URL sent back as the stored one, and any other URL as given', () => {
    const stored = 'https://user:s3cret@collector.example.com/v1/traces';
    expect(unredactUrl('https://user:***@collector.example.com/v1/traces', stored)).toBe(stored);
    expect(unredactUrl('https://user:other@collector.example.com/v1/traces', stored)).toBe('https://user:other@collector.example.com/v1/traces');
    expect(unredactUrl('https://other.example.com/v1/traces', stored)).toBe('https://other.example.com/v1/traces');
  });
});
