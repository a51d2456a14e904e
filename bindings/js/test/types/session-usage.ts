// Type-checked (never run): the session's SASL, timeout and reconnection API as a user writes it.
import { Session, ReconnectingSession, TimeoutError, AuthenticationError, ConnectionClosedError } from '../../index.js';

export async function scram(): Promise<number> {
  const s = await Session.connect({ host: '127.0.0.1', port: 9092, tls: { ca: 'pem' }, sasl: { mechanism: 'SCRAM-SHA-512', username: 'u', password: 'p' }, requestTimeoutMs: 5000 });
  const md = await s.request(3, { topics: [] }, { timeoutMs: 1000 });
  const st = s.stats();
  s.close();
  return (md.body.brokers?.length ?? 0) + st.reauthentications + st.saslAuthenticates + st.dropped + st.sessionLifetimeMs;
}

export async function oauth(fetchToken: () => Promise<string>): Promise<void> {
  const r = await ReconnectingSession.connect('127.0.0.1', 9093, { sasl: { mechanism: 'OAUTHBEARER', token: fetchToken }, reconnect: { initialDelayMs: 100, maxDelayMs: 5000 } });
  try {
    await r.request(18, {});
  } catch (err) {
    if (err instanceof TimeoutError || err instanceof ConnectionClosedError) return;
    if (err instanceof AuthenticationError) console.log(err.mechanism, err.errorCode, err.brokerMessage);
  }
  console.log(r.reconnects, r.session.closed);
  r.close();
}
