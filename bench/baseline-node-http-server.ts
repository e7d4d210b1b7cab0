// A baseline of the redirect benchmark below bare Fastify: Node's own http server answering 302
// from a Map, nothing else (issue 52: what Node's HTTP alone costs a redirect, the floor under any
// framework and under our ingress, which answers the common redirect on Node's request event).
import { createServer } from 'node:http';

const links = new Map<string, string>([['/bench', 'https://example.com/landing?ref=bench']]);
const server = createServer((req, res) => {
  const target = links.get(req.url ?? '');
  if (target === undefined) {
    res.writeHead(404, { 'content-length': '0' }).end();
    return;
  }
  res.writeHead(302, { location: target, 'content-length': '0' }).end();
});
server.listen(Number(process.env.HTTP_PORT), '127.0.0.1', () => console.log(`node http baseline listening on ${process.env.HTTP_PORT}`));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
