// A TCP proxy on Node with kwire-envoy.wasm on V8 (host.mjs), beside the same proxy
// without a module, for TestProxyBenchV8: the end-to-end comparison of the harness
// benchmark, in Envoy's default Wasm runtime.
//
//   node proxy.mjs MODULE.wasm CONFIG UPSTREAM_HOST:PORT
//
// It listens on two loopback ports, one forwarding bytes as they come and one
// handing them to the module first, and prints {"pass": port, "filter": port}. Each
// line read on stdin is answered with {"vmNanos", "callbacks", "copiedIn"}: the
// module's totals so far.
import { readFileSync } from 'node:fs';
import net from 'node:net';
import readline from 'node:readline';
import { newVM, DOWNSTREAM, UPSTREAM } from './host.mjs';

const [modulePath, config, upstream] = process.argv.slice(2);
const [upHost, upPort] = [upstream.slice(0, upstream.lastIndexOf(':')), Number(upstream.slice(upstream.lastIndexOf(':') + 1))];
const vm = newVM(new WebAssembly.Module(readFileSync(modulePath)), config);

function serve(withModule) {
  const server = net.createServer({ noDelay: true }, (client) => {
    const up = net.connect({ host: upHost, port: upPort, noDelay: true });
    const s = withModule ? vm.newStream() : null;
    let done = false;
    const shut = () => {
      if (done) return;
      done = true;
      client.destroy();
      up.destroy();
      if (s) s.close();
    };
    const pump = (from, to, dir) => {
      from.on('data', (data) => {
        const out = s ? s.deliver(dir, data) : data;
        if (out && out.length > 0) to.write(out);
        if (s && s.closed) shut();
      });
      from.on('end', shut);
      from.on('error', shut);
    };
    pump(client, up, DOWNSTREAM);
    pump(up, client, UPSTREAM);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

const pass = await serve(false);
const filter = await serve(true);
console.log(JSON.stringify({ pass, filter }));
const rl = readline.createInterface({ input: process.stdin });
rl.on('line', () => {
  const { vmNanos, callbacks, copiedIn } = vm.stats;
  console.log(JSON.stringify({ vmNanos: Number(vmNanos), callbacks, copiedIn }));
});
rl.on('close', () => process.exit(0));
