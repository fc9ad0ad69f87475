// The chat models of the catalog to pick from (none picked: the default model).
import { Select } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { queries } from '../api/queries';

export function ChatModelSelect({
  value,
  onChange,
  disabled = false,
}: {
  value: string | null;
  onChange: (model: string | null) => void;
  disabled?: boolean;
}) {
  const models = useQuery(queries.models());
  return (
    <Select
      label="Model"
      placeholder="default model"
      clearable
      data={(models.data?.models ?? [])
        .filter((item) => item.type === 'chat')
        .map((item) => item.name)}
      value={value}
      onChange={onChange}
      disabled={disabled}
    />
  );
}
