# One image for the processes of docker-compose.yml: the main server, the data server, the worker, and the migrate job.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force
COPY tsconfig.json ./
COPY src ./src
COPY workflows ./workflows
COPY activities ./activities
RUN mkdir -p /data && chown node:node /data
USER node
ENV HOST=0.0.0.0 DATA_DIR=/data
EXPOSE 3000 3100
CMD ["node", "--import", "tsx", "src/bin/api.ts"]
