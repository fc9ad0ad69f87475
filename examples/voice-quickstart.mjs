// Voice quick start: create a voice session, connect, stream a WAV file, print what comes back.
// Usage: KEY=sk-… node examples/voice-quickstart.mjs speech.wav   (16-bit PCM WAV, 16 kHz mono)
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';

const base = process.env.BASE ?? 'http://127.0.0.1:8080';
const response = await fetch(`${base}/v1/voice/sessions`, {
  method: 'POST',
  headers: { authorization: `Bearer ${process.env.KEY}`, 'content-type': 'application/json' },
  body: JSON.stringify({ user_id: 'quickstart', sample_rate: 16000 }),
});
const session = await response.json();
if (!response.ok) throw new Error(JSON.stringify(session));
const pcm = readFileSync(process.argv[2] ?? 'speech.wav').subarray(44); // skip the WAV header
const socket = new WebSocket(`${session.websocket_url}?token=${session.token}`);
socket.on('message', (data) => {
  const message = JSON.parse(data);
  console.log(message.type, message.text ?? message.delta ?? message.error?.message ?? '');
  if (message.type === 'turn_end') socket.close();
});
socket.on('open', async () => {
  // 20 ms chunks in real time, then a second of silence so the service hears the end of speech.
  const audio = Buffer.concat([pcm, Buffer.alloc(32000)]);
  for (let offset = 0; offset < audio.length; offset += 640) {
    socket.send(audio.subarray(offset, offset + 640));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
});
