// The baseline of the emails benchmark: a bare Fastify route that stores the
// posted JSON with one Postgres INSERT and answers its id.
import Fastify from 'fastify';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
await pool.query('CREATE TABLE IF NOT EXISTS bench_insert_baseline (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), idempotency_key text, body jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())');
const app = Fastify();
app.post('/emails', async (request) => {
  const { rows } = await pool.query<{ id: string }>('INSERT INTO bench_insert_baseline (idempotency_key, body) VALUES ($1, $2) RETURNING id', [request.headers['idempotency-key'] ?? null, request.body]);
  return { id: rows[0]!.id };
});
const address = await app.listen({ host: '127.0.0.1', port: Number(process.env.HTTP_PORT) });
console.log(`baseline listening ${address}`);
process.once('SIGTERM', () => void app.close().then(() => pool.end()).then(() => process.exit(0)));
