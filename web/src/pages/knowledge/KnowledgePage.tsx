// Knowledge bases: create one, upload text, Markdown and HTML files as documents, search with scores.
import { Button, Card, Group, Select, SimpleGrid, Stack, TextInput, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { queries } from '../../api/queries';
import { ErrorAlert, Page } from '../../components/common';
import { DocumentsCard, UploadCard } from './DocumentsCards';
import { useKnowledgeActions } from './knowledge-actions';
import { SearchCard } from './SearchCard';

/** Picking a knowledge base, and creating one (`done` empties the name once it is created). */
function KnowledgeBasesCard({
  selected,
  onSelect,
  onCreate,
}: {
  selected: string | null;
  onSelect: (id: string | null) => void;
  onCreate: (name: string, done: () => void) => void;
}) {
  const bases = useQuery(queries.knowledgeBases());
  const [newName, setNewName] = useState('');

  function submit(event: FormEvent) {
    event.preventDefault();
    onCreate(newName, () => setNewName(''));
  }

  return (
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
          onChange={onSelect}
        />
        <form onSubmit={submit}>
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
  );
}

export default function KnowledgePage() {
  const bases = useQuery(queries.knowledgeBases());
  const [selected, setSelected] = useState<string | null>(null);
  const { create, upload, uploaded, search, error } = useKnowledgeActions(setSelected);

  return (
    <Page title="Knowledge">
      <ErrorAlert error={bases.error ?? error} />
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <KnowledgeBasesCard
          selected={selected}
          onSelect={(value) => {
            setSelected(value);
            search.reset();
          }}
          onCreate={(name, done) => create.mutate(name, { onSuccess: done })}
        />
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
