// The baseline of the redirect benchmark: a bare Fastify server answering 302 from a Map.
import Fastify from 'fastify';

const links = new Map<string, string>([['bench', 'https://example.com/landing?ref=bench']]);
const app = Fastify();
app.get<{ Params: { shortId: string } }>('/:shortId', async (request, reply) => {
  const target = links.get(request.params.shortId);
  if (!target) return reply.status(404).send();
  return reply.redirect(target, 302);
});
const address = await app.listen({ host: '127.0.0.1', port: Number(process.env.HTTP_PORT) });
console.log(`baseline listening ${address}`);
// Stop cleanly on SIGTERM (lets a profiler started with BENCH_NODE_ARGS write its profile).
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
