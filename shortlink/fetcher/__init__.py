"""The title fetcher: fills a new link's title, description and image from its destination."""
