// Knowledge bases: create one, upload text, Markdown and HTML files as documents, search with scores.
import { Button, Card, Group, Select, SimpleGrid, Stack, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../../api/client';
import { keys, queries } from '../../api/queries';
import { ErrorAlert, Page, latestError } from '../../components/common';
import { DocumentsCard, UploadCard } from './DocumentsCards';
import { SearchCard } from './SearchCard';

export default function KnowledgePage() {
  const queryClient = useQueryClient();
  const bases = useQuery(queries.knowledgeBases());
  const [selected, setSelected] = useState<string | null>(null);
  const [newName, setNewName] = useState('');
  const [uploaded, setUploaded] = useState<string | null>(null);

  const create = useMutation({
    mutationFn: async (name: string) =>
      unwrap(await api.POST('/v1/knowledge-bases', { body: { name } })),
    onSuccess: (created) => {
      setNewName('');
      setSelected(created.id);
      return queryClient.invalidateQueries({ queryKey: keys.knowledgeBases });
    },
  });
  const upload = useMutation({
    mutationFn: async ({ baseId, files }: { baseId: string; files: File[] }) => {
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
    },
    onSuccess: (count) =>
      setUploaded(`${count} file(s) uploaded at ${new Date().toLocaleTimeString()}`),
    // A part of the files may be stored before one is refused: the lists are read again either way.
    onSettled: () => queryClient.invalidateQueries({ queryKey: keys.knowledgeBases }),
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

  function submitCreate(event: FormEvent) {
    event.preventDefault();
    create.mutate(newName);
  }

  return (
    <Page title="Knowledge">
      <ErrorAlert error={bases.error ?? latestError(create, upload, search)} />
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Card withBorder component="section" aria-labelledby="kb-title">
          <Stack>
            <Title order={3} size="h4" id="kb-title">
              Knowledge bases
            </Title>
            <Select
              label="Knowledge base"
              placeholder="Pick one"
              data={(bases.data?.knowledge_bases ?? []).map((base) => ({
                value: base.id,
                label: `${base.name} (${base.document_count} documents)`,
              }))}
              value={selected}
              onChange={(value) => {
                setSelected(value);
                search.reset();
              }}
            />
            <form onSubmit={submitCreate}>
              <Group align="flex-end">
                <TextInput
                  label="New knowledge base"
                  required
                  value={newName}
                  onChange={(event) => setNewName(event.currentTarget.value)}
                />
                <Button type="submit">Create</Button>
              </Group>
            </form>
          </Stack>
        </Card>
        {selected !== null && (
          <UploadCard
            uploaded={uploaded}
            onUpload={(files, done) =>
              upload.mutate({ baseId: selected, files }, { onSuccess: done })
            }
          />
        )}
      </SimpleGrid>
      {selected !== null && (
        <>
          <DocumentsCard knowledgeBaseId={selected} />
          <SearchCard
            results={search.data ?? null}
            onSearch={(query, topK) => search.mutate({ baseId: selected, query, topK })}
          />
        </>
      )}
    </Page>
  );
}

function contentTypeOf(file: File): 'text/plain' | 'text/markdown' | 'text/html' {
  const name = file.name.toLowerCase();
  if (name.endsWith('.md') || name.endsWith('.markdown')) return 'text/markdown';
  if (name.endsWith('.html') || name.endsWith('.htm')) return 'text/html';
  return 'text/plain';
}
