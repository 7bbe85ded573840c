'''mdxbench.post: the postprocessing behind the `mdxbench` command (perflogs to Elasticsearch, regression tracking, acceptance, reports).'''
