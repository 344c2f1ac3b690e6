"""The ReAct loop: the model answers or calls gateway tools, round after round."""
