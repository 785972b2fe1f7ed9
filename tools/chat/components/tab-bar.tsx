// The tab bar: merged, #open, one tab per channel, direct; unread counts in parentheses, the
// active tab in brackets.

import { Box, Text } from 'ink';
import { memo } from 'react';
import { accent, type ColorDepth } from '../colors.js';
import { type FeedState, tabsOf } from '../state/feed.js';

export const TabBar = memo(function TabBar({ feed, depth, width }: { feed: FeedState; depth: ColorDepth; width: number }) {
  const tabs = tabsOf(feed);
  return (
    <Box width={width} height={1} overflow="hidden">
      <Text wrap="truncate-end">
        {tabs.map((t) => {
          const n = feed.unread[t] ?? 0;
          const active = t === feed.active;
          return (
            <Text key={t}>
              <Text inverse={active} bold={active} {...(active ? {} : accent(depth, 'cyan') ? { color: 'cyan' } : {})}>
                {/* Brackets mark the active tab where inverse video is not shown (NO_COLOR, dumb terminals). */}
                {`${active ? '[' : ' '}${t}${n > 0 ? ` (${n})` : ''}${active ? ']' : ' '}`}
              </Text>
              <Text> </Text>
            </Text>
          );
        })}
      </Text>
    </Box>
  );
});
