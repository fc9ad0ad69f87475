// What the knowledge page asks of the service: create a knowledge base, upload files into one, and
// search one. One error area shows whichever of them ran last.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../../api/client';
import { keys } from '../../api/queries';
import { latestError } from '../../components/common';

function contentTypeOf(file: File): 'text/plain' | 'text/markdown' | 'text/html' {
  const name = file.name.toLowerCase();
  if (name.endsWith('.md') || name.endsWith('.markdown')) return 'text/markdown';
  if (name.endsWith('.html') || name.endsWith('.htm')) return 'text/html';
  return 'text/plain';
}

/** Stores each file as a document, one after another; answers how many were stored. */
async function uploadFiles({ baseId, files }: { baseId: string; files: File[] }) {
  for (const file of files) {
    unwrap(
      await api.POST('/v1/knowledge-bases/{kb_id}/documents', {
        params: { path: { kb_id: baseId } },
        body: {
          title: file.name.replace(/\.[^.]+$/, ''),
          content: await file.text(),
          content_type: contentTypeOf(file),
          source: file.name,
        },
      }),
    );
  }
  return files.length;
}

export function useKnowledgeActions(onCreated: (id: string) => void) {
  const queryClient = useQueryClient();
  const invalidate = () => queryClient.invalidateQueries({ queryKey: keys.knowledgeBases });
  // Kept apart from the mutation, so that a failed upload does not hide the last one's message.
  const [uploaded, setUploaded] = useState<string | null>(null);

  const create = useMutation({
    mutationFn: async (name: string) =>
      unwrap(await api.POST('/v1/knowledge-bases', { body: { name } })),
    onSuccess: (created) => {
      onCreated(created.id);
      return invalidate();
    },
  });
  const upload = useMutation({
    mutationFn: uploadFiles,
    onSuccess: (count) =>
      setUploaded(`${count} file(s) uploaded at ${new Date().toLocaleTimeString()}`),
    // A part of the files may be stored before one is refused: the lists are read again either way.
    onSettled: invalidate,
  });
  const search = useMutation({
    mutationFn: async ({ baseId, query, topK }: { baseId: string; query: string; topK: number }) =>
      unwrap(
        await api.POST('/v1/knowledge-bases/{kb_id}/search', {
          params: { path: { kb_id: baseId } },
          body: { query, top_k: topK },
        }),
      ).results,
  });

  return { create, upload, uploaded, search, error: latestError(create, upload, search) };
}
