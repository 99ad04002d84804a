import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/core/logger.js';

function capture(): { lines: string[]; destination: Writable } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(chunk.toString('utf8'));
      callback();
    },
  });
  return { lines, destination };
}

describe('logger', () => {
  it('writes JSON lines at the configured level', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ level: 'warn', destination });
    logger.info('hidden');
    logger.warn({ drain: 'honeycomb' }, 'shown');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ level: 40, msg: 'shown', drain: 'honeycomb' });
  });

  it('never writes secrets, API keys, header values or image data', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ destination });
    logger.info({
      api_key: 'sk-top',
      headers: { authorization: 'Bearer sk-auth', 'x-honeycomb-team': 'hc-key' },
      drain: { secret: 'shh', headers: { 'x-team': 'team-key' } },
      request: { image_url: 'data:image/png;base64,AAAA' },
    }, 'config');
    const text = lines.join('');
    for (const secret of ['sk-top', 'sk-auth', 'hc-key', 'shh', 'team-key', 'base64,AAAA']) expect(text).not.toContain(secret);
    expect(text).toContain('[redacted]');
  });

  it('censors two levels down, in arrays and errors, and leaves the logged object as it was', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ destination }).child({ exporter: 'debug' });
    const failure = Object.assign(new Error('upstream refused'), { headers: { authorization: 'Bearer sk-in-error' } });
    const logged = {
      providers: { openai: { api_key: 'sk-deep' } },
      drains: [{ name: 'a', secret: 'sk-array' }],
      err: failure,
      body: Buffer.from('kept'),
      spans: 100,
    };
    logger.warn(logged, 'deep');
    const text = lines.join('');
    for (const secret of ['sk-deep', 'sk-array', 'sk-in-error']) expect(text).not.toContain(secret);
    const line = JSON.parse(text) as { spans: number; err: { message: string }; drains: { name: string }[] };
    expect(line.spans).toBe(100);
    expect(line.err.message).toBe('upstream refused');
    expect(line.drains[0]?.name).toBe('a');
    expect(logged.providers.openai.api_key).toBe('sk-deep');
    expect(logged.drains[0]?.secret).toBe('sk-array');
    expect(failure.headers.authorization).toBe('Bearer sk-in-error');
  });

  it('keeps an error\'s type and censors inside it, in nested errors, class instances and child bindings', () => {
    const { lines, destination } = capture();
    class ProviderConfig {
      constructor(readonly name: string, readonly apiKey: string) {}
    }
    const inner = Object.assign(new Error('socket hang up'), { token: 'sk-inner', headers: { authorization: 'Bearer sk-inner-auth' } });
    const logger = createLogger({ destination }).child({ drain: { headers: { 'x-team': 'bound-key' } } }).child({ component: 'admin', secret: 'bound-secret' });
    logger.error({ err: Object.assign(new TypeError('upstream failed'), { original: inner }), provider: new ProviderConfig('openai', 'sk-class'), request: { headers: ['sk-array-header'] }, password: undefined }, 'failed');
    const text = lines.join('');
    for (const secret of ['sk-inner', 'sk-inner-auth', 'sk-class', 'bound-key', 'bound-secret', 'sk-array-header']) expect(text).not.toContain(secret);
    const line = JSON.parse(text) as Record<string, unknown> & { err: { type: string; message: string }; provider: { name: string }; component: string };
    expect(line.err.type).toBe('TypeError');
    expect(line.err.message).toBe('upstream failed');
    expect(line.provider.name).toBe('openai');
    expect(line.component).toBe('admin');
    expect('password' in line).toBe(false);
  });
});
