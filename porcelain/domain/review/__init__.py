"""The review's pure parts: markers, state of a review chain, instructions."""
