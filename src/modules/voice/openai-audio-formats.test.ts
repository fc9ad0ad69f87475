import { describe, expect, it } from 'vitest';
import { languageName, renderTranscript, timestamp } from './openai-audio-formats.js';

const options = { temperature: 0, granularities: [] };

describe('OpenAI’s transcription formats', () => {
  it('writes SRT and WebVTT times to the millisecond, past the hour', () => {
    expect(timestamp(0, ',')).toBe('00:00:00,000');
    expect(timestamp(3723.4567, '.')).toBe('01:02:03.457');
  });

  it('makes one cue of the whole audio when the engine gives no segments, none for silence', () => {
    const source = { text: 'hello there', language: 'en', confidence: 0.5, durationSeconds: 2.5 };
    expect(renderTranscript(source, 'srt', options).body).toBe(
      '1\n00:00:00,000 --> 00:00:02,500\nhello there\n',
    );
    expect(renderTranscript(source, 'vtt', options).body).toBe(
      'WEBVTT\n\n00:00:00.000 --> 00:00:02.500\nhello there\n',
    );
    expect(renderTranscript({ ...source, text: '' }, 'srt', options).body).toBe('');
    expect(renderTranscript({ ...source, text: '' }, 'vtt', options).body).toBe('WEBVTT\n');
    const verbose = renderTranscript(source, 'verbose_json', {
      temperature: 0.3,
      granularities: ['word', 'segment'],
    }).body;
    expect(verbose).toMatchObject({
      language: 'english',
      duration: 2.5,
      segments: [{ id: 0, start: 0, end: 2.5, temperature: 0.3, avg_logprob: -0.6931 }],
      words: [],
      usage: { type: 'duration', seconds: 3 },
    });
  });

  it('names languages in English as Whisper does, and keeps a code it cannot name', () => {
    expect(languageName('en')).toBe('english');
    expect(languageName('de')).toBe('german');
    expect(languageName(null)).toBe('unknown');
    expect(languageName('qqq')).toBe('qqq');
  });
});
