// Voice sessions, the one-time redemption of their tokens, and the state of the keys behind open
// real-time connections (read in one query for all of them).
import type { Kysely } from 'kysely';
import type { OutputFormat } from '../../audio/audio-types.js';
import type { VoiceSession } from './voice-session.js';
import type { DatabaseSchema, VoiceSessionsTable } from '../../storage/schema.js';

function toSession(row: VoiceSessionsTable): VoiceSession {
  return {
    id: row.id,
    accountId: row.account_id,
    keyId: row.key_id,
    userId: row.user_id,
    conversationId: row.conversation_id,
    model: row.model,
    sttModel: row.stt_model,
    ttsModel: row.tts_model,
    voiceId: row.voice_id,
    languageCode: row.language_code,
    sampleRate: Number(row.sample_rate),
    audioFormat: row.audio_format as OutputFormat,
    tokenExpiresAt: row.token_expires_at,
    expiresAt: row.expires_at,
    connectedAt: row.connected_at,
    createdAt: row.created_at,
  };
}

export class VoiceSessionsRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  async insert(session: VoiceSession, tokenHash: string): Promise<void> {
    await this.db
      .insertInto('voice_sessions')
      .values({
        id: session.id,
        account_id: session.accountId,
        key_id: session.keyId,
        user_id: session.userId,
        conversation_id: session.conversationId,
        model: session.model,
        stt_model: session.sttModel,
        tts_model: session.ttsModel,
        voice_id: session.voiceId,
        language_code: session.languageCode,
        sample_rate: session.sampleRate,
        audio_format: session.audioFormat,
        token_hash: tokenHash,
        token_expires_at: session.tokenExpiresAt,
        expires_at: session.expiresAt,
        connected_at: null,
        created_at: session.createdAt,
      })
      .execute();
  }

  /**
   * Uses the token: the session whose token hash matches, not yet used, not expired. The update
   * clears the hash in the same statement, so two connections racing with one token get one
   * session between them.
   */
  /** The key behind a session whose token is still unused and valid, without using it. */
  async keyIdForToken(
    sessionId: string,
    tokenHash: string,
    now: string,
  ): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('voice_sessions')
      .select('key_id')
      .where('id', '=', sessionId)
      .where('token_hash', '=', tokenHash)
      .where('token_expires_at', '>', now)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return row?.key_id;
  }

  async redeem(
    sessionId: string,
    tokenHash: string,
    now: string,
  ): Promise<VoiceSession | undefined> {
    const updated = await this.db
      .updateTable('voice_sessions')
      .set({ token_hash: null, connected_at: now })
      .where('id', '=', sessionId)
      .where('token_hash', '=', tokenHash)
      .where('token_expires_at', '>', now)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) !== 1) return undefined;
    const row = await this.db
      .selectFrom('voice_sessions')
      .selectAll()
      .where('id', '=', sessionId)
      .executeTakeFirst();
    return row === undefined ? undefined : toSession(row);
  }

  async setConversation(sessionId: string, conversationId: string): Promise<void> {
    await this.db
      .updateTable('voice_sessions')
      .set({ conversation_id: conversationId })
      .where('id', '=', sessionId)
      .execute();
  }
}
