// The broker tests of session-broker.test.js against Kafka 3.9.2 (one broker for this file).
process.env.KWIRE_BROKER_VERSION = '3.9.2';
await import('./session-broker.test.js');
