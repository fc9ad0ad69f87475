// The chat routes' limits (`chat` in the config file): the body a chat request may have, larger
// than other routes' because a turn may carry base64 images, and the inline data a stored turn
// keeps (a data URL, audio or a file), beyond which a turn to be stored answers 413.
import type { Static } from 'typebox';
import { Closed, OptionalInteger, type EnvReader } from '../../config/config-kit.js';

/** Outer bounds of the settings; the schemas bound a part's inline data at the same 100 MiB. */
const mebibyte = 1024 * 1024;
const maxBodyLimit = 1024 * mebibyte;
const maxStoredDataUrl = 100 * mebibyte;

export const ChatFileSchema = Closed({
  body_limit_bytes: OptionalInteger(1024, maxBodyLimit),
  max_stored_data_url_bytes: OptionalInteger(1024, maxStoredDataUrl),
});

type ChatFile = Static<typeof ChatFileSchema>;

export function readChatEnv(env: EnvReader): ChatFile {
  return {
    body_limit_bytes: env.integer('CHAT_BODY_LIMIT_BYTES', 1024, maxBodyLimit),
    max_stored_data_url_bytes: env.integer('MAX_STORED_DATA_URL_BYTES', 1024, maxStoredDataUrl),
  };
}

/** The environment's settings, else the file's, else the defaults (16 MiB and 5 MiB). */
export function chatConfig(fromEnv: ChatFile, file: ChatFile = {}) {
  return {
    bodyLimitBytes: fromEnv.body_limit_bytes ?? file.body_limit_bytes ?? 16 * mebibyte,
    maxStoredDataUrlBytes:
      fromEnv.max_stored_data_url_bytes ?? file.max_stored_data_url_bytes ?? 5 * mebibyte,
  };
}
