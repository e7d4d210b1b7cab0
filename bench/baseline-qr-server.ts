// The baseline of the QR benchmark: the same rendering as the render pool's
// (render-worker.ts), called on the event loop of a bare Fastify server, one
// request at a time, so the benchmark compares the pool against one thread
// behind the same kind of HTTP endpoint.
import Fastify from 'fastify';
import render from '../src/links/qr/render-worker.ts';
import type { QrTask } from '../src/links/qr/render-task.ts';

const app = Fastify();
app.post<{ Body: QrTask }>('/qr', async (request, reply) => {
  const image = await render(request.body);
  if ('refused' in image) throw new Error(image.refused); // a QR code's text always fits
  return reply.type(image.contentType).send(Buffer.from(image.body));
});
const address = await app.listen({ host: '127.0.0.1', port: Number(process.env.HTTP_PORT) });
console.log(`baseline listening ${address}`);
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
