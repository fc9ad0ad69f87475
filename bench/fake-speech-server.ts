// The fake cloud speech API (OpenAI's audio API shape) as a process of its own, for benchmarks.
import { startFakeSpeechUpstream } from '../test/support/fake-speech-upstream.js';

const upstream = await startFakeSpeechUpstream({
  openAiKey: process.argv[2] ?? 'bench-speech-key',
  deepgramKey: 'unused',
  port: Number(process.argv[3] ?? 0),
});
process.stdout.write(`ready ${upstream.openAiBaseUrl}\n`);
process.on('SIGTERM', () => {
  void upstream.close().then(() => process.exit(0));
});
