"""Analytics: click figures for one link or a whole account, from daily rollups."""
