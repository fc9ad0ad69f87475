// The gateway benchmark's chat-call section: what the chat service's layers (fallbacks, the
// response cache's check, call metrics, metering and the ledger, deployments, retries) cost per
// call, measured in this one process, in turns, against the OpenAI-compatible model's own
// `generate` and a minimal `http.request` client, all calling the same fake upstream (another
// process). Unlike the HTTP rounds, nothing here is shared with a server's socket work, so the
// differences are the layers'. `BENCH_GATEWAY_PART=layers npm run bench -- gateway` prints them.
import { Agent, request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../src/config/load-config.js';
import { generateApiKey } from '../src/modules/accounts/api-key-format.js';
import { BpeTokenCounter } from '../src/models/bpe-token-counter.js';
import { deploymentsOf } from '../src/models/deployments/deployment-models.js';
import { OpenAiCompatibleChatModel } from '../src/models/providers/openai-compatible-chat-model.js';
import { createServices, type ServiceContainer } from '../src/services.js';
import { benchDeployments, benchUpstreamModel } from './support.js';

const warmUpCalls = Number(process.env.BENCH_LAYERS_WARM_UP ?? 5000);
const rounds = Number(process.env.BENCH_LAYERS_ROUNDS ?? 8);
const callsPerRound = Number(process.env.BENCH_LAYERS_CALLS_PER_ROUND ?? 2000);

const messages = [{ role: 'user' as const, content: 'Say hello to the benchmark in a few words.' }];

/** The service over the fake upstream: the bench's model of two deployments, the ledger on or off. */
async function serviceOf(directory: string, upstreamUrl: string, ledger: boolean) {
  const adminKey = generateApiKey();
  const config = loadConfig({
    env: {
      DATABASE_URL: `sqlite:${path.join(directory, `layers-${String(ledger)}.db`)}`,
      LOG_LEVEL: 'silent',
      PLATFORM_ADMIN_KEY: adminKey,
      USAGE_LEDGER: String(ledger),
    },
    overrides: {
      default_model: 'bench-upstream',
      models: [
        {
          ...benchUpstreamModel(upstreamUrl, 1024),
          provider: 'openai-compatible' as const,
          deployments: benchDeployments(upstreamUrl, 2),
        },
      ],
    },
  });
  const services = await createServices(config, pino({ level: 'silent' }));
  await services.accounts.bootstrap(config.auth.adminKey);
  const principal = await services.authenticator.authenticate(adminKey, '127.0.0.1');
  return { services, principal };
}

/** One stateless chat completion through the chat service, as the Chat Completions route asks it. */
function serviceCall(
  services: ServiceContainer,
  principal: { accountId: string; keyId: string },
  signal: AbortSignal,
) {
  return () =>
    services.chat.complete({
      accountId: principal.accountId,
      apiKeyId: principal.keyId,
      userId: null,
      conversationId: null,
      persist: false,
      messages,
      model: 'bench-upstream',
      temperature: undefined,
      maxTokens: undefined,
      params: {},
      signal,
      route: 'POST /v1/chat/completions',
      endUser: null,
      warn: () => undefined,
      cached: () => undefined,
    });
}

/** The least a client does: a keep-alive POST and the answer parsed. */
function minimalCall(upstreamUrl: string) {
  const url = new URL(`${upstreamUrl}/chat/completions`);
  const agent = new Agent({ keepAlive: true });
  const body = JSON.stringify({ model: 'gpt-4o-mini', messages, max_tokens: 1024 });
  const call = () =>
    new Promise<unknown>((resolve, reject) => {
      const outgoing = request(
        {
          hostname: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/json',
            'content-length': String(Buffer.byteLength(body)),
          },
        },
        (incoming) => {
          const parts: Buffer[] = [];
          incoming.on('data', (part: Buffer) => parts.push(part));
          incoming.on('end', () => resolve(JSON.parse(Buffer.concat(parts).toString('utf8'))));
          incoming.on('error', reject);
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  return { call, close: () => agent.destroy() };
}

const round1 = (value: number) => Math.round(value * 10) / 10;

export async function measureChatLayers(upstreamUrl: string) {
  const directory = mkdtempSync(path.join(tmpdir(), 'bench-layers-'));
  const signal = new AbortController().signal;
  const metered = await serviceOf(directory, upstreamUrl, true);
  const unmetered = await serviceOf(directory, upstreamUrl, false);
  // The model alone: the service's first deployment, as its router calls it, with nothing above.
  const [first] = deploymentsOf(metered.services.models.definitionOf('bench-upstream'));
  if (first === undefined) throw new Error('The bench model has no deployments.');
  const raw = new OpenAiCompatibleChatModel(first.definition, undefined, new BpeTokenCounter());
  const minimal = minimalCall(upstreamUrl);
  const kinds: Array<[string, () => Promise<unknown>]> = [
    ['chat_service_ledger_on', serviceCall(metered.services, metered.principal, signal)],
    ['chat_service_ledger_off', serviceCall(unmetered.services, unmetered.principal, signal)],
    [
      'model_alone',
      () =>
        raw.generate({
          messages,
          maxTokens: 1024,
          signal,
          fairnessKey: metered.principal.accountId,
          params: {},
        }),
    ],
    ['minimal_client', minimal.call],
  ];
  // BENCH_LAYERS_ONLY=<name,…>: only those ways (to profile one).
  const only = process.env.BENCH_LAYERS_ONLY?.split(',');
  if (only !== undefined)
    kinds.splice(0, kinds.length, ...kinds.filter(([name]) => only.includes(name)));
  try {
    for (const [, call] of kinds) for (let index = 0; index < warmUpCalls; index += 1) await call();
    const totals = new Map(kinds.map(([name]) => [name, 0]));
    for (let round = 0; round < rounds; round += 1) {
      for (const [name, call] of round % 2 === 0 ? kinds : [...kinds].reverse()) {
        const before = process.cpuUsage();
        for (let index = 0; index < callsPerRound; index += 1) await call();
        const spent = process.cpuUsage(before);
        totals.set(name, (totals.get(name) ?? 0) + spent.user + spent.system);
      }
    }
    const perCall = Object.fromEntries(
      [...totals].map(([name, micros]) => [
        `${name}_us`,
        round1(micros / (rounds * callsPerRound)),
      ]),
    );
    /** What the chat service adds over the model alone (when both were measured). */
    const over = (service: number | undefined) =>
      service === undefined || perCall.model_alone_us === undefined
        ? undefined
        : round1(service - perCall.model_alone_us);
    return {
      calls_each: rounds * callsPerRound,
      warm_up_calls_each: warmUpCalls,
      ...perCall,
      layers_ledger_on_us: over(perCall.chat_service_ledger_on_us),
      layers_ledger_off_us: over(perCall.chat_service_ledger_off_us),
    };
  } finally {
    minimal.close();
    await metered.services.close();
    await unmetered.services.close();
    rmSync(directory, { recursive: true, force: true });
  }
}
